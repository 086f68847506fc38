package demo

import (
	_ "embed"
	"io"
	"strings"
)

// The files are embedded as strings rather than []byte so that no caller can
// change what the next caller reads: every accessor hands out a fresh reader
// or copy.

//go:embed kg.tsv
var kgTSV string

//go:embed questions.tsv
var questionsTSV string

// KGName labels the embedded graph in parse errors ("demo/kg.tsv:12: ..."),
// so a message points at the file in the repository.
const KGName = "demo/kg.tsv"

// QuestionsName labels the embedded questions the same way.
const QuestionsName = "demo/questions.tsv"

// Sample is a well-connected entity (films directed and written, birthplace,
// nationalities, spouse, sibling, school, award, company) whose neighbourhood
// makes a readable quick-start lookup.
const Sample = "Christopher_Nolan"

// Hub is the entity with by far the most edges (64), for tests of how
// retrieval caps or down-weights high-degree nodes.
const Hub = "United_States"

// Sizes of the embedded graph, so loader tests in other packages can assert
// exact counts without re-deriving them; the package tests keep them true.
const (
	NumTriples   = 447
	NumEntities  = 279
	NumRelations = 26
)

// KG returns a reader over the embedded knowledge graph in TSV form
// (head<TAB>relation<TAB>tail, one triple per line). Each call returns a new
// reader positioned at the start.
func KG() io.Reader { return strings.NewReader(kgTSV) }

// KGBytes returns a copy of the embedded knowledge graph, for callers that
// want the whole file at once.
func KGBytes() []byte { return []byte(kgTSV) }

// Questions returns a copy of the embedded questions in PathQuestion format
// (question<TAB>answer(gold1/gold2/)<TAB>subj#rel#...#answer#<end>#answer).
func Questions() []byte { return []byte(questionsTSV) }
