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
// importing the evaluation harness.
package benchmark
