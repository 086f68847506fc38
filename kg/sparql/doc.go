// Package sparql reads a KG from a SPARQL 1.1 endpoint (Virtuoso serving
// Freebase, QLever, Jena Fuseki, GraphDB, Amazon Neptune) as a kg.Reader,
// so every stage of stem runs over a graph too large to hold in memory.
//
// Only the SPARQL 1.1 protocol and standard query forms are needed (POST
// with a form-encoded query, or GET where the endpoint answers POST with
// 405 or 501; JSON results, VALUES, GROUP BY, ORDER BY, LIMIT/OFFSET). One engine extension is used where the engine has it:
// Virtuoso's free-text index (bif:contains), for SearchNames. The tests
// run against two engines, Virtuoso and Oxigraph (internal/virtuoso,
// internal/oxigraph), and want the in-memory backend's answers from both.
// A literal is asked for again as the engine gave it, with its language
// tag or datatype ("148"^^xsd:integer is another term than "148").
//
// Names: an IRI under Config.Prefix (Freebase's ns: by default) is named
// by its local part, percent-decoded, so a KG exported by `stem kg export`
// reads back with its original names; other IRIs are named by the whole
// IRI, literals by their lexical form (as kg.ReadNTriples names them). A
// local name that is an opaque id (Config.IDs: Freebase's machine ids) is
// named by its label instead (Config.Label, type.object.name), with the id
// added when other entities share the label; an id with no label is a CVT,
// which Neighbourhood walks through. The name predicates
// (kg.LabelPredicates and kg.AliasPredicates: type.object.name,
// common.topic.alias, rdfs:label, skos:prefLabel, skos:altLabel,
// schema:name, schema:alternateName, foaf:name) are read for name lookup
// and are not edges.
//
// Any other RDF KG (DBpedia, Wikidata) is read with Config.Naming
// NamingRDF (--kg-naming rdf), as kg.ReadNTriples reads the same file:
// every IRI named by its label under kg.LabelPredicates ("label (local
// name)" among namesakes), else by its kg.LocalName, and relations by
// their local names (dbo:birthPlace is birthPlace), found again by those
// names among the endpoint's predicates.
//
// Cost: a question's graph is fetched by Graph.Neighbourhood one hop at a
// time: per hop and direction, one COUNT query per batch of entities (the
// per-entity counts let a page the server cut short be detected, and cap
// hubs before their edges are read) and then one query per batch of
// entities whose edges fill at most a page, never one query per edge;
// batches and both directions are asked at once, up to Concurrency
// queries in flight. Engines cut results at a row limit without saying so
// (Virtuoso's ResultSetMaxRows, 10,000 by default), and reject VALUES
// blocks of a few thousand IRIs: pages are PageSize rows, batches Batch
// entities, and a short page is ErrTruncated, never a smaller answer. An
// entity with more edges than a page is read page after page, each
// starting after the last row of the one before in (relation, other end)
// order of their strings: Virtuoso refuses to sort more than
// MaxSortedTopRows (10,000) rows, so a page at an OFFSET past it fails.
//
// Hubs: an entity with more than MaxDegree edges in a direction keeps its
// first MaxDegree in that order, and is counted in Stats.Capped.
package sparql
