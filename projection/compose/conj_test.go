package compose_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/plan"
)

// TestConjunctions asks testdata/conjunction.cases of its hand-written KG
// with the compose planner, no training and no LLM: each question names a
// second thing beside its topic entity, whose path narrows the topic's
// answers to exactly the wanted ones.
func TestConjunctions(t *testing.T) {
	enc, lex := realEncoder(t), realLexicon(t)
	ctx := context.Background()
	g, err := kg.Load(ctx, filepath.Join("testdata", "conjunction.tsv"), kg.FormatTSV)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := kgvec.Build(ctx, g, enc, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := plan.DefaultSettings()
	s.Planner = "compose"
	p, _, err := plan.Open(ctx, s, plan.Assets{Graph: g, Entities: ents, Encoder: enc, Lexicon: lex})
	if err != nil {
		t.Fatal(err)
	}
	answerAll(ctx, t, p, "compose", readCases(t, filepath.Join("testdata", "conjunction.cases")))
}
