package plan

import "github.com/stem-kgqa/stem/kg"

// Source is where the pipeline takes each question's graph from: one
// shared KG walked in place, a remote KG each question's neighbourhood is
// fetched from, or none, each question bringing its own graph. It is
// chosen once, when the pipeline opens (SourceOf), and every stage that
// depends on it asks it rather than guessing from the KG's type.
type Source struct {
	kind   SourceKind
	graph  kg.Reader          // the shared KG; nil for OwnGraphs
	remote kg.Neighbourhooder // its bulk fetch, for RemoteKG
}

// SourceKind names the three places a question's graph comes from.
type SourceKind int

const (
	// OwnGraphs is no shared KG: each question brings its own graph
	// (WebQSP-mini, RoG rows).
	OwnGraphs SourceKind = iota
	// SharedKG is one KG walked in place (in memory): every question is
	// answered over it.
	SharedKG
	// RemoteKG is a KG too large to walk edge by edge (a SPARQL endpoint,
	// kg.Remote): each question is answered over its neighbourhood,
	// fetched in bulk (Pipeline.MaxHops).
	RemoteKG
)

// String names the kind for logs.
func (k SourceKind) String() string {
	switch k {
	case OwnGraphs:
		return "own graphs"
	case SharedKG:
		return "shared KG"
	case RemoteKG:
		return "remote KG"
	}
	return "SourceKind(?)"
}

// SourceOf returns the source of questions asked of shared KG g (nil:
// each question brings its own graph).
func SourceOf(g kg.Reader) Source {
	if g == nil {
		return Source{kind: OwnGraphs}
	}
	if nb := kg.Remote(g); nb != nil {
		return Source{kind: RemoteKG, graph: g, remote: nb}
	}
	return Source{kind: SharedKG, graph: g}
}

// Kind says where the questions' graphs come from.
func (s Source) Kind() SourceKind { return s.kind }

// Graph returns the shared KG (remote or not), nil for OwnGraphs.
func (s Source) Graph() kg.Reader { return s.graph }

// PerQuestion reports whether each question is answered over a graph of
// its own (OwnGraphs, RemoteKG): what prepares per KG (a planner encoding
// every relation, a strategy's index) prepares per question.
func (s Source) PerQuestion() bool { return s.kind != SharedKG }

// kindFor returns where q's graph comes from: its own graph when it
// brings one, whatever the pipeline's source.
func (s Source) kindFor(q Query) SourceKind {
	if q.Graph != nil {
		return OwnGraphs
	}
	return s.kind
}
