// Package train builds Triple-GNN training examples from benchmark
// questions, trains a tripgnn.Model on them with early stopping, and scores
// the guidance graph against two baselines (paper section 3.3, appendix C.1).
//
// # Examples
//
// An example is one question on a subgraph of its KG: the question entities,
// the schema triples of its first gold path (schema.PathGraph, the oracle
// planner's graph), and labels 1 on the entities of its gold reasoning chains
// (the ends of benchmark.GoldTriples), 0 elsewhere. Entity texts are not model
// inputs (h0 is E_Q on the question entities); relation texts are encoded
// with the encoder, forward as kg.RelationText and inverse as "inverse of
// ...". A schema triple is [E_h; E_r; E_t], a placeholder side being the
// encoding of its canonical text ("[ENT1]"), a named side the encoding of the
// KG entity's text.
//
// # Subgraphs
//
// The subgraph is the k-hop neighbourhood of the question entities, k the
// number of schema triples (the path length), built breadth first. Hub nodes
// are capped without looking at labels: a node with more than MaxNeighbors
// incident triples expands only the MaxNeighbors whose hash of (node, triple
// id) is smallest, which is a deterministic pseudo-random sample that does not
// depend on the question; once MaxNodes entities are in, no new entity is
// added. The subgraph's edges are all KG triples among the kept entities. The
// question entities are always kept. The same rule builds the subgraph at
// inference time (plan's GNN guider), so the model sees the same
// distribution it was trained on.
//
// # Metrics
//
// Recall@K (K = 4 x |schema triples|, tripgnn.Model.K) is the share of the
// gold-chain entities (question entities included, and counting those the
// subgraph cap dropped) among the top K entities of a ranking. Two baselines
// rank the same subgraph: by encoder cosine between entity text and question
// text, and by hop distance from the question entities, then KG degree
// (higher first), then id.
package train
