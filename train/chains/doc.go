// Package chains extracts reasoning chains from a knowledge graph for
// training data (paper appendix C.1): for a
// question with its question entities and answers, all shortest paths from a
// question entity to each answer, the union of their triples T, its masked
// form T' and the strategy label.
//
// # Chains
//
// A chain is a path of KG triples from a question entity to an answer.
// Reachability treats edges as undirected, as GCR and CoG do, but each
// step keeps its triple's real direction (Chain.Forward). Chains are the
// shortest ones: a multi-source breadth-first search from all question
// entities records, for every entity it reaches, the triples by which it is
// reached at its distance (its parent list), and the chains to an answer are
// all walks back along parent lists. Two triples joining the same two
// entities (parallel edges, either direction) give two chains. An answer
// farther than Options.MaxHops triples is unreachable.
//
// An answer that is itself a question entity ("who is the child of X's
// parent?" answered by X, or a PathQuestion self-loop) would have a chain of
// length zero, which holds no evidence. Its chains are instead the shortest
// closed walks from it back to itself that use no triple twice (a self-loop,
// two parallel triples, a triangle ...), up to MaxHops; the other question
// entities are not used as starts for it. A closed walk and its reverse are
// the same evidence, so only one is kept: the one that reads first in name
// order (relation, entity, relation, ...), so that a KG read from a file
// and the same KG fetched from a SPARQL endpoint keep the same one; the
// one whose first triple id is smaller when both read the same.
//
// # Longer chains
//
// The shortest chain is not always the reasoning a question asks for. In
// PathQuestion, "what is the gender of X's father?" is answered by male,
// and when X is male too the shortest chain is (X, gender, male), one hop,
// while the question describes two; PQ-3H's gold paths even go back and
// forth ("X's parent's child's nationality" walks X -> parent -> X ->
// nationality). Options.MinHops (or, per question, the gold path's length
// with Options.QuestionHops) asks for chains at least that long: an answer
// nearer than MinHops gets the non-backtracking walks of the smallest
// length L from MinHops to MaxHops that has any. A non-backtracking walk
// never takes the same triple twice in a row, so it cannot step out and
// straight back, but it may come back to an entity over another triple
// (two parallel triples such as parents and children) or over the same
// triple later. The walks are found by a depth-first search forward from
// the question entities, pruned by the distance to the answer (a
// breadth-first search from it), so only walks that can still end at the
// answer in L triples are followed. An answer with no such walk within
// MaxHops falls back to its shortest chains. For an answer that is a
// question entity the closed walks are searched the same way (the walk
// and its reverse counted once), falling back to the shortest closed walks.
//
// Options.MaxPaths caps the chains kept per question. When more shortest
// chains exist, they are shared out round-robin over the answers (one chain
// for every answer, then a second for every answer that has one, ...), and
// each answer keeps its first chains in search order, so a Breadth question
// keeps one chain per answer for as long as the cap allows. What is dropped
// is counted: Result.Found counts every shortest chain and Result.Capped
// those not kept; an answer that got no chain because of the cap is counted
// in Result.CappedAnswers (it is reachable, so it is not unreachable).
//
// # Masking
//
// Mask turns the union of the chains' triples, T, into T' (C.1): every
// entity that is not a question entity becomes a placeholder [ENTn], one per
// distinct entity, shared by every triple that holds it, numbered 1, 2, ...
// in order of first appearance walking the chains in order, each from its
// question entity. The one exception is the answer of a closed walk: where
// the walk comes back to the question entity it starts from, that end is
// masked too, with its own placeholder, because it is what the question asks
// for (the schema graph of "X's parent's child" is X -> [ENT1] -> [ENT2], as
// the oracle planner writes it, not X -> [ENT1] -> X). The item's AnswerSlot
// is the placeholder reached last on the first chain; with several answers
// the others' placeholders are in Placeholders, which maps every
// placeholder to the KG entity it hides.
//
// # Schema graphs
//
// Mask's T' is the evidence, entity by entity; it is not what a planner
// should learn to write. A Breadth question with forty answers along one
// relation pattern has forty chains, and the planner's schema graph has
// one pattern with one answer placeholder. Schema collapses chains that
// walk the same relations in the same directions from the same question
// entity into one pattern, kept through its first chain; up to
// Options.MaxPatterns patterns are kept, the most frequent first.
// Intermediate entities get placeholders pattern by pattern, and all
// patterns end at one answer placeholder, numbered last, because planners
// read the highest-numbered placeholder as the answer.
// Extractor.Extract writes Schema's graph as the item's Triples and Masked.
// When the question has a gold pattern (a PathQuestion path, a MetaQA
// qtype) and a chain walks it, only those chains are used, because the
// other shortest chains are coincidences. Mask's full evidence goes to
// Item.Evidence, and the entities of the chains used go to
// Item.SubgraphEntities, the Triple-GNN's labels.
//
// # Questions and summaries
//
// Extractor.Extract turns an benchmark.Question into a dataset.Item and an
// Outcome, and Summary adds outcomes up: how many questions have a chain,
// how many chains contain the gold path, how many answers are unreachable
// and how many chains the cap dropped.
package chains
