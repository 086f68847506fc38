// Package peers brings the systems STEM is compared with into stem as
// retrieval strategies, run by name beside STEM's own (`--retriever NAME`,
// `stem compare --strategies stem,simgrag,gcr,dog,graphraft`). Each peer
// lives in a package of its own below this one, implements plan.Retriever
// over the KG interface (so it runs over a file or a SPARQL endpoint
// alike, and its answers go through the same metrics and faithfulness
// audit) and owns its settings struct, registered here with it; no peer
// imports another (what they share is peers/signals). Adding a fifth is
// its package plus one line in Retrievers.
//
// No peer here is its paper's system: each runs its paper's algorithm
// with one neutral stand-in for the LLM its paper uses
// (signals.Similarity, the same for all four), or that LLM itself in its
// LLM mode; each package's doc says point by point what its paper does,
// what stands in and why. By default a peer stands on its own, reading
// nothing of STEM's planner; GCR and GraphRAFT, whose papers fine-tune a
// model, have trained stand-ins (--gcr-model, --graphraft-model: a
// signals.Classifier learnt from the training questions STEM's planner
// learns from); --peer-plan-weight above 0 is the labelled
// planner-assisted mode. stem compare names each row for what ran ("gcr
// (stand-in)", "gcr (stand-in, trained)", "gcr (llm)") and prints the
// figures the papers report for their own systems (Reported) under the
// table, never as ours.
package peers

import (
	"github.com/stem-kgqa/stem/peers/dog"
	"github.com/stem-kgqa/stem/peers/gcr"
	"github.com/stem-kgqa/stem/peers/graphraft"
	"github.com/stem-kgqa/stem/peers/simgrag"
	"github.com/stem-kgqa/stem/plan"
)

// Retrievers returns the registry of every retrieval strategy stem ships:
// STEM's (plan.DefaultRetrievers) and the peers', each with its settings.
func Retrievers() *plan.Registry {
	r := plan.DefaultRetrievers()
	// Registering fixed, distinct names cannot fail.
	_ = plan.RegisterWith(r, simgrag.Name, simgrag.Doc, simgrag.DefaultSettings, simgrag.Open)
	_ = plan.RegisterWith(r, gcr.Name, gcr.Doc, gcr.DefaultSettings, gcr.Open)
	_ = plan.RegisterWith(r, graphraft.Name, graphraft.Doc, graphraft.DefaultSettings, graphraft.Open)
	_ = plan.RegisterWith(r, dog.Name, dog.Doc, dog.DefaultSettings, dog.Open)
	return r
}
