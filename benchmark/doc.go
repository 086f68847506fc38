// Package benchmark loads the KGQA benchmark question sets stem is measured
// on: PathQuestion, MetaQA (with its question types), WebQSP as released by
// GNN-RAG with RoG's ground paths, and RoG-style JSONL rows that carry their
// own subgraphs. Each becomes a list of Question values with gold answers,
// topic entities and gold relation paths (schema.GoldPath).
//
// Loaders report malformed input as file:line errors wrapping ErrSyntax and
// check their context between lines, so a cancelled load stops promptly.
// Nothing here scores answers (package eval) or answers questions (package
// plan): the package only reads data, so training code can use it without
// importing the evaluation harness. Besides reading, it derives two
// datasets from loaded ones, in memory: the union of own graphs as a
// shared KG (Union) and an unanswerable variant whose KG lacks the answer
// edges of a fixed sample of questions (RemoveAnswers, with its manifest
// Unanswerable); the commands write them.
package benchmark
