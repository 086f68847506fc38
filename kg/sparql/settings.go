package sparql

import (
	"time"

	"github.com/stem-kgqa/stem/internal/retry"
	"github.com/stem-kgqa/stem/kg"
)

// Settings are the command-line knobs of a SPARQL KG (flags of every
// command that takes --kg); Config adds what only code sets.
type Settings struct {
	Graph     string        `flag:"kg-graph" placeholder:"IRI" category:"sparql" usage:"SPARQL KGs: the named graph IRI to query (default: the endpoint's default graph)"`
	Prefix    string        `flag:"kg-prefix" placeholder:"IRI" category:"sparql" usage:"SPARQL KGs: IRI prefix stripped from entity and relation IRIs to name them (Freebase's ns: by default)"`
	IDs       string        `flag:"kg-ids" placeholder:"REGEXP" category:"sparql" usage:"SPARQL KGs: local names that are opaque ids, named by --kg-label; an id with no label is a CVT, walked through (Freebase MIDs by default; none for no ids)"`
	Label     string        `flag:"kg-label" placeholder:"IRI" category:"sparql" usage:"SPARQL KGs: the predicate whose literal names an entity whose IRI is an opaque id (Freebase's type.object.name by default)"`
	Naming    string        `flag:"kg-naming" placeholder:"freebase|rdf" category:"sparql" usage:"SPARQL KGs: how entities and relations are named: freebase (local names under --kg-prefix, opaque ids by --kg-label) or rdf, for any RDF KG (DBpedia, Wikidata): every IRI by its label (rdfs:label, skos:prefLabel, schema:name, foaf:name, type.object.name), else by its local name, relations by their local names, as stem reads an N-Triples file"`
	CountCVT  bool          `flag:"kg-count-cvt" category:"sparql" usage:"SPARQL KGs: a CVT counts as a hop of --kg-hops like any entity (by default a hop walks through it)"`
	TextIndex string        `flag:"kg-text" placeholder:"auto|virtuoso|none" category:"sparql" usage:"SPARQL KGs: find entity names by their words with Virtuoso's text index (bif:contains): auto uses it when the engine accepts it"`
	Timeout   time.Duration `flag:"sparql-timeout" category:"sparql" usage:"SPARQL KGs: time limit of one query (retried on 5xx and lost connections)"`
	Retries   int           `flag:"sparql-retries" min:"0" category:"sparql" usage:"SPARQL KGs: retries of a query that failed with a 5xx or a lost connection"`
	PageSize  int           `flag:"sparql-page" min:"1" category:"sparql" usage:"SPARQL KGs: rows per page (at most the server's cap, Virtuoso's ResultSetMaxRows)"`
	Batch     int           `flag:"sparql-batch" min:"1" category:"sparql" usage:"SPARQL KGs: entities per VALUES block"`
	Parallel  int           `flag:"sparql-parallel" min:"1" category:"sparql" usage:"SPARQL KGs: queries in flight at once (a question's graph is fetched in several batches at once)"`
	MaxDegree int           `flag:"sparql-max-degree" min:"1" category:"sparql" usage:"SPARQL KGs: edges kept per entity and direction; a hub keeps its first N in (relation, other end) order"`
}

// DefaultSettings returns the defaults Config documents.
func DefaultSettings() Settings {
	return Settings{Prefix: kg.FreebaseNS, IDs: DefaultIDs, Label: kg.NamePredicate, Naming: NamingFreebase, TextIndex: TextAuto, Timeout: DefaultTimeout, Retries: retry.DefaultMaxRetries, PageSize: DefaultPageSize, Batch: DefaultBatch, Parallel: DefaultConcurrency, MaxDegree: DefaultMaxDegree}
}

// Config returns the configuration for endpoint.
func (s Settings) Config(endpoint string) Config {
	retries := s.Retries
	if retries == 0 {
		retries = -1 // Config's 0 means the default; the flag's 0 means none
	}
	return Config{Endpoint: endpoint, Graph: s.Graph, Prefix: s.Prefix, IDs: s.IDs, Label: s.Label, Naming: s.Naming, CountCVT: s.CountCVT, TextIndex: s.TextIndex, Timeout: s.Timeout, Retries: retries,
		PageSize: s.PageSize, Batch: s.Batch, Concurrency: s.Parallel, MaxDegree: s.MaxDegree}
}
