// Package tracing is STEM's structure-tracing subgraph retrieval (paper
// sections 3.4-3.6 and appendix H, Algorithms 1 and 2): it anchors the
// question entities in the knowledge graph, then walks each candidate schema
// graph edge by edge from the anchor, matching every schema edge to KG edges
// by the T-Score, and returns the matched evidence, the entities bound to the
// answer placeholder, and the evidence flattened into reasoning chains.
//
// # Anchoring
//
// For each question mention, the top Config.TopN entities by embedding
// similarity (kgvec) plus every entity whose normalised name equals the
// mention's (kg.EntitiesByNorm) are candidates. A candidate's score is 1 when
// its normalised name equals the mention's; otherwise it is
//
//	(1-StringWeight)*cosine + StringWeight*editdist.Ratio
//
// where editdist.Ratio is 1 - Levenshtein distance / longer length on the
// normalised names. Embeddings alone rank "inception" and "insomnia" close
// when the vectors know neither; the string term makes exact and near-exact
// names win. The score is then multiplied by Lambda when the entity is in the
// guidance graph (eq. 10-11) and the best candidate is the anchor, ties
// broken by higher degree (the better-connected namesake is the likelier
// intended one) and then by id. Explicit Request.Anchors skip all of this and
// start at S0 = 1 (times Lambda in the guidance graph). The schema-side node
// is the schema mention with the best edit ratio against the question mention.
//
// # Matching
//
// The search follows Algorithm 1/2 with these decisions, each fixing a gap or
// a fault of the authors' released code (PennyYu123/STEM_RAG):
//
//   - Both graphs are walked undirected: a schema edge is reached from either
//     end, and a KG in-edge matches as well as an out-edge.
//   - A KG triple is never matched twice on one branch of the search (the
//     Contradict check is on the KG triple, per branch, so that sibling
//     Breadth branches may both reach the same fact and each records it).
//     A schema edge is matched once per branch too, which bounds the depth by
//     the number of schema edges and makes cyclic schema graphs terminate;
//     a schema edge whose far end is already bound (a cycle closing, or the
//     anchor itself) only matches KG edges that reach that bound entity.
//   - A schema edge that names a KG relation exactly matches only that
//     relation's edges where the walk's entity has some (Config.SoftSymbols
//     off, the default): over a shared KG a relation whose text resembles
//     the planned one (a country's currency_used for its
//     languages_spoken) must not bind answers beside it. Where the entity
//     has no edge of it, and for relations the KG does not name (an LLM's
//     plans), similarity decides as the paper says.
//   - T-Score = cosine(schema triple, KG triple) + Tau for KG triples in the
//     guidance graph (eq. 12-13); S(i+1) = S(i) + T-Score, S0 = anchor score.
//   - Precision keeps the best KG edge per step, and every edge tied with it
//     (within 1e-5): when the schema cannot tell edges apart, for example the
//     five starred_actors of a film under relation text, picking one by id
//     would be arbitrary. On hubs this can keep thousands of edges (MetaQA's
//     Drama: 4,030 tied has_genre edges); MaxBranch bounds it.
//   - Breadth keeps every KG edge with T-Score >= Theta. When none reaches
//     Theta it falls back to the best (tied) edges, so that a paraphrased
//     relation the encoder scores at 0.55 does not end the search with no
//     evidence at all (Config.StrictTheta turns it off; measured below).
//   - S is threaded through the schema edges of a node, and an answer is
//     scored by the best completed S of the branch that bound it, so
//     constraint edges matched after the answer node still rank it.
//   - A schema graph whose mentions anchor two or more of its nodes (a
//     conjunction: "the film directed by A in language B", or two anchors
//     meeting at a CVT) is one search, from the anchor of fewest edges,
//     with the other anchored nodes bound before it starts (anchor.go,
//     join). At every node the edges towards those nodes are matched
//     first, and a branch that cannot reach one ends there, its evidence
//     dropped: the answers are those every branch reaches, the
//     intersection of the branches, where separate searches would each
//     bind whatever their own anchor reaches.
//   - Config.MaxBranch caps the KG edges kept per step (best first), a safety
//     valve for Breadth on hubs; 0 means no cap, as in the paper.
//   - Every search (one schema graph from one anchor) has a budget, the same
//     at every step (budget.go): Config.MaxScan KG edges scored and
//     Config.MaxKeep kept. A step searches the edges it keeps best first and
//     gives each an equal share of what the keep budget leaves; a step that
//     would pass the scan budget looks at its best relations that fit, or is
//     not taken; the result's problems say when a budget was reached. Below
//     the budget the answers are those of the unbounded search, whatever the
//     order. At an entity with thousands of edges, a step scores its
//     relations first and looks only at the edges of those it can select
//     (prune.go), which gives the same selection as looking at all of them.
//   - A ranked request's readings (Request.Groups) are traced in their
//     order until one binds answers, which are the result's; the later
//     readings then run on Config.FallbackScan (2,000 edges scored a
//     search), since only the evidence, the tie-break by the readings
//     that bind an answer (Answer.Bound) and plan selection's
//     alternatives see them: a later reading that turns into a hub stops
//     there instead of reading every tied edge's names.
//
// # Triple text
//
// A schema triple has a placeholder where the KG triple has a concrete
// entity, so encoding both in full (TextFull, the paper's eq. 12 read
// literally) lets the unknown entity's words move the score. The default,
// TextFarMention, compares the relation text plus the far end only when that
// end is a question mention (a constraint such as "[ENT1] starred_actors
// Tom_Hardy"); the near end is the entity the walk stands on, the same on
// both sides by construction, so including it (TextKnownEnds) only pushes
// every cosine towards 1 and lets wrong relations pass Theta. TextRelation
// compares relations only. Measured by TestPlaceholderEncoding (37 demo
// questions, oracle schema graphs from the gold path, Precision for one gold
// answer else Breadth; Hits@1 / exact answer set):
//
//	               spelling-only     word vectors
//	far-mention    1.000 / 0.919     1.000 / 0.919
//	known-ends     1.000 / 0.649     1.000 / 0.514
//	full           0.973 / 0.703     0.973 / 0.514
//	relation       1.000 / 0.919     1.000 / 0.919
//
// far-mention and relation tie on path questions (no far mentions);
// TestConstraintMention shows far-mention alone answering a constraint.
//
// Matching is undirected, so under relation text "London located_in
// United_Kingdom" and "University_College_London located_in London" tie
// exactly. Direction then breaks the tie: a reversed edge is dropped when a
// kept edge pointing the schema's way has the same score.
//
// Breadth's fallback (above), measured with TextFull where it matters (with
// the default text the gold relation scores ~1): Hits@1 0.973 with it, 0.838
// (spelling) / 0.865 (word vectors) without; exact-set 0.703 / 0.514 with,
// 0.730 / 0.622 without: the fallback trades some over-retrieval for never
// returning nothing.
//
// # Cost
//
// With a models.Additive encoder, New encodes every entity and relation name
// once into un-normalised parts, so a KG triple's vector is a sum of two or
// three rows and its cosine one fused pass over them: no allocation and no
// string work per edge, and when the far end is not in the text, edges of the
// same relation share one score. Other encoders encode triple texts in one batch
// per step through a per-trace cache.
//
// # Output
//
// Evidence is the union of matched KG triples over all schema graphs and
// anchors, each once with its best cumulative score. Answers are the KG
// entities bound to the answer placeholder, scored by the best S that bound
// them: Precision keeps those tied at the overall best, Breadth keeps all.
// Note that S grows with every hop, so under Precision a longer candidate
// schema graph outranks a shorter one. Precision keeps the answers tied with the
// best on S and direction and bound by as many of the request's graphs.
// A ranked request (a planner's candidates, best first) takes its answers
// from the first group of graphs that binds any (Request.Groups: a
// planner's relation variants of its first graph read with it). Chains flatten the evidence by
// depth-first search from the anchors; an edge walked against its direction
// is written "A <- relation <- B". Every evidence triple and answer is
// audited against the KG (Result.Unbacked, which must be 0).
package tracing
