package graphraft

import "github.com/stem-kgqa/stem/peers/signals"

// Pair is a training question and the key (Query.Key) of its
// synthesized ground-truth query (signals.Pair).
type Pair = signals.Pair

// Selector is the query selector learnt from synthesized or gold pairs
// (signals.Classifier), standing in for the paper's fine-tuned query
// generator L1: under the grounded mask it only ever weighs queries that
// exist around the question's entities.
type Selector = signals.Classifier

// Train learns a Selector from pairs (signals.Train).
func Train(pairs []Pair) *Selector { return signals.Train(pairs) }
