// Package eval is stem's evaluation harness: it runs benchmark questions
// (loaded by package benchmark) through a retriever and scores the answers
// with the metrics the peer systems report, so that stem's figures sit next
// to theirs in one table. It consumes the pipeline; nothing below the
// command line imports it.
//
// # Metrics
//
// Answer metrics follow the RoG evaluation code (reasoning-on-graphs,
// src/qa_prediction/evaluate_results.py) and GNN-RAG's Hits@1, to the
// letter, because a figure computed any other way does not compare:
// Normalize lowercases, drops ASCII punctuation, drops the words a/an/the
// and collapses whitespace; a prediction matches a gold answer when the
// normalised gold answer is a substring of the normalised prediction. With
// joined = all predictions joined by spaces, Hit is 1 when any gold answer
// matches joined, Hits@1 is 1 when any gold answer matches the first
// prediction, matched counts the gold answers matching joined, Recall =
// matched/#gold, Precision = matched/#predictions (0 with no prediction),
// and F1 combines them. Run averages each over questions, times 100. A
// model's free-text output becomes predictions with SplitLines, which, like
// Python's str.split("\n"), turns "" into one empty prediction.
//
// # Coverage
//
// Coverage is the paper's Equation 17: |R ∩ G_reason| / |R|, where R is the
// set of KG triples of the question's ground-truth reasoning path and
// G_reason is the retriever's evidence. For PathQuestion, whose gold path
// names every entity, R is that path's triples. For MetaQA and WebQSP, whose
// gold paths are relation patterns, R is the pattern grounded in the
// question's KG: every triple on an instance of a gold relation path that
// leads from a topic entity to a gold answer (see GroundPaths). A gold triple
// counts as covered when the evidence holds it in either orientation,
// because retrievers walk edges both ways and a mirrored triple states the
// same fact. Questions whose R is empty (no KG, or no grounded instance) are
// left out of the coverage average and counted apart (CoverageN).
//
// # Calibration and abstention
//
// When the answerer gives a calibrated confidence (Prediction.Calibrated),
// Report.Calibration measures it against the first answer's correctness
// (Hits@1) over the questions answered: ECE with ECEBins (10) equal-width
// bins weighted by count, AURC (the mean risk, 1 - Hits@1, of the k most
// confident questions over k = 1..n; ties count their group's mean), and
// the Hits@1 of the 50% and 80% most confident questions. A question the
// answerer abstained on (--min-confidence) scores as no answer in every
// other metric, and counts in Calibration.Abstained. Given the questions
// whose answers a variant's KG lacks (Options.Unanswerable, from stem data
// unanswerable), the report says how many of them were abstained and the
// Hits@1 of the others.
package eval
