// Package kg is stem's in-memory knowledge-graph store: every later stage
// (entity anchoring, schema tracing, evidence mining, the Triple-GNN and the
// faithfulness audit) reads the graph through it.
//
// A Graph interns entity and relation names to int32 ids in first-seen
// order, so loading the same file twice gives the same ids. Triples live in
// three int32 columns, and adjacency is kept in compressed sparse row form
// in both directions, each row sorted by (relation, neighbour), so Out, In
// and OutRel are slices into shared arrays and HasTriple is a binary search.
// Parallel edges (same two entities, different relations) are kept; exact
// duplicate triples are dropped and counted (Graph.Duplicates). A Graph is
// immutable once built and safe for concurrent readers.
//
// # Input formats
//
//   - tsv: one triple per line, head<TAB>relation<TAB>tail. This is the
//     PathQuestion knowledge-base format (2H-kb.txt, 3H-kb.txt,
//     PQL2-KB.txt), where names use '_' for spaces, e.g.
//     "ludwig_ii_of_bavaria<TAB>parents<TAB>maximilian_ii_of_bavaria".
//     Spaces around a field are dropped ("A <TAB>r<TAB> B" is A, r, B);
//     spaces inside a name stay.
//   - pipe: head|relation|tail, the MetaQA kb.txt format, e.g.
//     "Kismet|directed_by|William Dieterle". Names are kept byte for byte
//     and may contain spaces.
//   - nt: N-Triples (W3C RDF 1.1), any RDF KG (DBpedia, Wikidata, a
//     Freebase subset, stem kg export's files). Subjects and predicates are
//     IRIs (or blank nodes for subjects); objects may also be literals.
//     Labels (rdfs:label, skos:prefLabel, schema:name, foaf:name,
//     type.object.name; @en or untagged) name their IRIs, alternative
//     labels (skos:altLabel, schema:alternateName, common.topic.alias)
//     are aliases, and neither is an edge; an IRI without a label and
//     every relation are named by the IRI's LocalName, percent-decoded
//     (dbo:birthPlace is birthPlace). Blank nodes keep "_:label", and
//     literals become their unescaped lexical form, with the language tag
//     and datatype dropped, because answers are matched by text.
//   - rog: JSON Lines as released with RoG (rmanluo/RoG-webqsp, RoG-cwq):
//     one question per line with "id", "question", "answer", "q_entity",
//     "a_entity" and "graph", a list of [head, relation, tail] names forming
//     that question's own subgraph. ReadRoG streams the rows, building one
//     Graph per row.
//   - freebase: Google's Freebase dump (freebase-rdf-latest.gz) or its
//     cleaned form: FilterEnglishTriplets.py's filter, then names as the
//     SPARQL backend gives them, machine ids and namesakes' plain names
//     kept as aliases (see FormatFreebase).
//   - snapshot: stem's binary format, written by WriteSnapshot and
//     BuildSnapshot (stem kg build), version 3. Little-endian, every
//     section 8-byte aligned: the magic "STEMKG", a format version, the
//     counts, both name tables (offsets, byte blob and hash index each),
//     the three triple columns, both adjacencies with their row offsets,
//     the normalised-name index, the aliases and a CRC-32C of everything
//     before it. On Linux ReadSnapshot maps the file read-only and the
//     graph points into the mapping, so loading is the checksum pass plus,
//     on another core, linear structural checks (ids in range, offsets
//     monotone, adjacency rows consistent with the columns, names unique
//     and reachable in their hash index; rows and names sampled above 2M);
//     a truncated, corrupt, older- or newer-version file is refused with
//     an error saying which and naming the file, never a panic.
//
// Text formats may be gzip- or bzip2-compressed: the first bytes tell, and
// "kb.nt.gz" still chooses N-Triples by its inner extension.
//
// # Building in bounded memory
//
// Load holds the whole graph while it builds it (about twice the
// snapshot's size at its peak). BuildSnapshot reads the same formats and
// writes the snapshot WriteSnapshot writes for the graph Load gives, byte
// for byte, holding about BuildOptions.MaxMemory whatever the input's
// size: names are interned run by run and resolved through hash
// partitions on disk (extDict), triples are ordered by external sorts
// (internal/extsort), and hash indexes have one canonical layout built
// from sorted keys (canonicalSlots), so that neither path depends on
// insertion order.
//
// In the text formats, empty lines are skipped, a trailing '\r' and a
// leading UTF-8 byte-order mark are tolerated, and a bad line is reported
// as "file:LINE: what is wrong", for example
// "kb.txt:12: wrong number of columns (got 2 columns, want 3, separated by '|')".
// Errors wrap sentinels (ErrColumns, ErrEmptyField, ErrSyntax, ErrEmpty,
// ErrCorrupt, ErrNewerVersion, ErrUnknownFormat) for errors.Is. Load with
// FormatAuto picks the format from a snapshot's magic bytes, a .nt
// extension, or the first data line (a Freebase dump's shape means
// freebase, a tab tsv, a '|' pipe). ParseFormat also takes the dataset
// words pq and metaqa for their KG files' formats. A command writing a KG
// checks its output's name with CheckOutputName (FormatOfName: .nt, .tsv,
// .kg/.stemkg, .jsonl), so that the name never says another format than
// the one written.
//
// # Export as RDF
//
// WriteNTriples (stem kg export) writes any KG as N-Triples for a SPARQL
// store. A name that is already an absolute IRI (IsIRI) is kept; any
// other becomes EntityIRI(base, name), base defaulting to Freebase's ns:
// (FreebaseNS), with every character a SPARQL local name cannot hold
// percent-encoded, so NameFromIRI gives the name back exactly. Each
// entity also gets `<e> <NamePredicate> "name"@en .`. Load reads the
// file back as the same KG. A SPARQL backend names terms with NameFromIRI
// and looks names up through NamePredicate.
// NTriplesEncoder writes the same lines for triples streamed by name
// (stem kg synth --out kg.nt), without a graph.
//
// # Names as text
//
// Encoders see words, not identifiers. EntityText turns "Barack_Obama" into
// "barack obama" and keeps Freebase machine ids such as "m.0abc12" as they
// are; RelationText turns "location.location.nearby_airports" into
// "location location nearby airports", "__people__person__gender" into
// "people person gender" and "http://dbpedia.org/ontology/birthPlace" into
// "birth place". Normalize folds case and punctuation for name lookup
// (Graph.EntitiesByNorm).
package kg
