// Package signalstest holds what the peers' tests share: an encoder whose
// vectors a test sets by hand, so that a test decides which text is
// nearest which and the distances a paper's worked example gives come out
// exactly, and small KG fixtures.
package signalstest

import (
	"context"
	"hash/fnv"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/models/llm/llmtest"
)

// Encoder gives each text in Vectors its vector, normalised, and any
// other text a fixed pseudo-random unit vector seeded by the text, nearly
// orthogonal to the rest in Dim dimensions. It is safe for concurrent use
// once built.
type Encoder struct {
	Dims    int
	Vectors map[string][]float32
}

// New returns an encoder of dim dimensions with the given vectors.
func New(dim int, vectors map[string][]float32) *Encoder {
	return &Encoder{Dims: dim, Vectors: vectors}
}

// Name implements models.Encoder.
func (e *Encoder) Name() string { return "signalstest" }

// Dim implements models.Encoder.
func (e *Encoder) Dim() int { return e.Dims }

// Encode implements models.Encoder.
func (e *Encoder) Encode(_ context.Context, texts []string, dst []float32) error {
	if err := models.CheckDst(e.Name(), len(texts), e.Dims, dst); err != nil {
		return err
	}
	for i, t := range texts {
		v := dst[i*e.Dims : (i+1)*e.Dims]
		if w, ok := e.Vectors[t]; ok {
			copy(v, w)
		} else {
			h := fnv.New64a()
			h.Write([]byte(t))
			rng := rand.New(rand.NewPCG(h.Sum64(), 35))
			for j := range v {
				v[j] = float32(rng.NormFloat64())
			}
		}
		models.Normalize(v)
	}
	return nil
}

// Graph builds an in-memory KG of triples, ids in order of first
// appearance.
func Graph(t testing.TB, triples [][3]string) *kg.Graph {
	t.Helper()
	b := kg.NewBuilder()
	for _, tr := range triples {
		b.Add(tr[0], tr[1], tr[2])
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Entity returns the id of the entity named name, failing t without one.
func Entity(t testing.TB, g kg.Reader, name string) int32 {
	t.Helper()
	id, ok := g.Entity(name)
	if !ok {
		t.Fatalf("no entity %q", name)
	}
	return id
}

// Client returns an LLM client of the scripted server s that retries once
// with millisecond backoffs, closed when t ends.
func Client(t testing.TB, s *llmtest.Server) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: s.BaseURL(), Model: "peer-test", APIKeyEnv: "STEM_PEER_TEST_NO_KEY", Timeout: 10 * time.Second,
		MaxRetries: 1, BackoffBase: time.Millisecond, BackoffMax: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
