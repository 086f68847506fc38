// Package synth is stem's Structure-to-Query reverse generation (paper
// appendix C.2): it samples small subgraphs of a knowledge graph by random
// walks, masks them, and turns each into a training question whose answers
// are known from the graph itself, so planners and the Triple-GNN can be
// trained on relations no benchmark question covers.
//
// # Sampling
//
// A Sampler walks from a seed entity (the question entity, which stays
// named) along edges taken in either direction, each triple keeping its real
// direction. The walk is the chain; with probability Options.Branch a chain
// node also grows one extra edge, so the subgraph becomes a tree. Every other
// entity becomes an [ENTn] placeholder, numbered by first appearance in the
// item's triples (chain first, then branches), one per distinct entity, as
// in C.1. The answer placeholder is the end of the chain.
//
// The recorded answers are not just the walk's end: they are every entity
// reached by following the chain's relations, in the chain's directions,
// from the seed (the seed itself excluded), because a question such as "what
// is the nationality of X 's spouse ?" is answered by all of them. That is
// what makes an item faithful; the strategy follows from the answer count
// (dataset.StrategyFor). Items whose pattern reaches too many answers are
// dropped and counted, as are walks that cannot reach their drawn length.
//
// Sampling is deterministic for Options.Seed: each seed entity draws from its
// own PCG stream, seeded by (Options.Seed, entity id), and results come back
// in seed order whatever the number of workers.
//
// # Questions
//
// A Verbalizer writes a question from relation text alone (no LLM); a
// Generator asks a chat model for the question and one sentence per masked
// triple with prompt P6 (figure 16), then for the strategy with P5, and
// drops replies that fail the checks (see Generator.Generate).
package synth
