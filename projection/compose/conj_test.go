package compose_test

import (
	"context"
	"path/filepath"
	"testing"
)

// TestConjunctions asks testdata/conjunction.cases of its hand-written KG
// with the compose planner, no training and no LLM: each question names a
// second thing beside its topic entity, whose path narrows the topic's
// answers to exactly the wanted ones.
func TestConjunctions(t *testing.T) {
	ctx := context.Background()
	p := openCompose(ctx, t, "conjunction")
	answerAll(ctx, t, p, "compose", readCases(t, filepath.Join("testdata", "conjunction.cases")))
}
