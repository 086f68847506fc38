// Package rogfile writes and reads the JSON Lines files of RoG
// (RManLuo/reasoning-on-graphs) and GNN-RAG (cmavro/GNN-RAG), so that
// stem's answers and evidence go out in the formats the KGQA field scores
// and reasons over, not only come in:
//
//   - predictions.jsonl (FormatPredictions): one row per question, {"id",
//     "question", "prediction", "ground_truth", "input"} in that order, as
//     RoG's src/qa_prediction/predict_answer.py and GNN-RAG write it. The
//     prediction is the answers one per line, so their
//     evaluate_results.py (which splits it on "\n") scores stem's answers
//     exactly as eval.ScoreAnswers does; Score reads such a file back.
//   - the retrieval-only export (FormatPaths): per question, stem's
//     evidence as the prompt RoG and GNN-RAG feed their LLM (Prompt: the
//     instruction, a "Reasoning Paths:" block with one path per line,
//     "Question:") and as plain JSON paths of KG triples, with the gold
//     answers, so a reasoning model of one's own can answer from stem's
//     retrieval. Reason is that step over an OpenAI-compatible chat
//     server; it writes predictions.jsonl.
//
// A path line is RoG's utils.path_to_string: the entities and relations
// as walked, joined by " -> ", whichever way the KG triple points (RoG
// walks an undirected graph). stem's chains write an edge walked against
// its direction "A <- rel <- B"; ParseChain reads them back into steps
// that keep the direction, so the JSON paths hold each triple as the KG
// states it while the prompt reads as RoG's.
//
// The package consumes eval (its Prediction and Result) and benchmark
// (the question, gold answers and topic entities); nothing but cmd/stem
// imports it.
package rogfile
