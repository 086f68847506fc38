// Package peers brings the systems STEM is compared with into stem as
// retrieval strategies, run by name beside STEM's own (`--retriever NAME`,
// `stem compare --config retriever=NAME`): each peer lives in a package
// of its own below this one and implements plan.Retriever over the KG
// interface, so it runs over a file or a SPARQL endpoint alike and its
// answers go through the same metrics and faithfulness audit.
package peers

import "github.com/stem-kgqa/stem/plan"

// Retrievers returns the registry of every retrieval strategy stem ships:
// STEM's (plan.DefaultRetrievers) and the peers'.
func Retrievers() *plan.Registry {
	return plan.DefaultRetrievers()
}
