package peers

import (
	"context"
	"slices"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/plan"
)

func TestRetrievers(t *testing.T) {
	r := Retrievers()
	if got, want := r.Names(), []string{"stem", "simgrag", "gcr"}; !slices.Equal(got, want) {
		t.Fatalf("names %v, want %v", got, want)
	}
	g, err := kg.GraphOf([][3]string{{"a", "r", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range r.Names() {
		if r.Doc(name) == "" {
			t.Errorf("%s has no doc", name)
		}
		if _, err := r.New(context.Background(), name, plan.Env{Graph: g, Encoder: wordvec.New(nil, wordvec.Options{})}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
