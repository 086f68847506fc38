package peers

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/plan"
)

func TestRetrievers(t *testing.T) {
	r := Retrievers()
	if got, want := r.Names(), []string{"stem", "simgrag", "gcr", "graphraft", "dog"}; !slices.Equal(got, want) {
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

// A setting of 0 keeps the paper's value; any other replaces it.
func TestPeerSettings(t *testing.T) {
	if c := simgragConfig(plan.PeerSettings{}); c.K != 3 || c.KNodes != 16 || c.KRelations != 16 {
		t.Errorf("simgrag defaults %+v", c)
	}
	if c := simgragConfig(plan.PeerSettings{SimGRAGK: 5, SimGRAGNodes: 8, SimGRAGRelations: 4}); c.K != 5 || c.KNodes != 8 || c.KRelations != 4 {
		t.Errorf("simgrag settings %+v", c)
	}
	if c := graphraftConfig(plan.PeerSettings{}); c.Queries != 1 || c.Hops != 2 || c.Choices != 20 {
		t.Errorf("graphraft defaults %+v", c)
	}
	if c := graphraftConfig(plan.PeerSettings{GraphRAFTQueries: 3, GraphRAFTHops: 3, GraphRAFTChoices: 5}); c.Queries != 3 || c.Hops != 3 || c.Choices != 5 {
		t.Errorf("graphraft settings %+v", c)
	}
	if c := gcrConfig(plan.PeerSettings{}); c.Hops != 2 || c.Beam != 10 {
		t.Errorf("gcr defaults %+v", c)
	}
	if c := gcrConfig(plan.PeerSettings{GCRHops: 3, GCRBeam: 4}); c.Hops != 3 || c.Beam != 4 {
		t.Errorf("gcr settings %+v", c)
	}
	if c := dogConfig(plan.PeerSettings{}); c.Beam != 2 || c.Depth != 3 {
		t.Errorf("dog defaults %+v", c)
	}
	if c := dogConfig(plan.PeerSettings{DoGBeam: 5, DoGDepth: 2}); c.Beam != 5 || c.Depth != 2 {
		t.Errorf("dog settings %+v", c)
	}
}

// --simgrag-llm takes the pipeline's LLM client, and says so when there is
// none.
func TestLLMModesNeedAClient(t *testing.T) {
	g, err := kg.GraphOf([][3]string{{"a", "r", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	for name, peers := range map[string]plan.PeerSettings{"simgrag": {SimGRAGLLM: true}, "gcr": {GCRLLM: true}, "dog": {DoGLLM: true}, "graphraft": {GraphRAFTLLM: true}} {
		env := plan.Env{Graph: g, Encoder: wordvec.New(nil, wordvec.Options{}), Peers: peers}
		if _, err := Retrievers().New(context.Background(), name, env); err == nil || !strings.Contains(err.Error(), "--llm-model") {
			t.Errorf("%s, no client: %v", name, err)
		}
		env.Chat = func() (*llm.Client, error) { return llm.New(llm.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m"}) }
		if _, err := Retrievers().New(context.Background(), name, env); err != nil {
			t.Errorf("%s, with a client: %v", name, err)
		}
	}
}
