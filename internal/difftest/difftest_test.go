package difftest

import (
	"context"
	"flag"
	"testing"

	"github.com/stem-kgqa/stem/models/wordvec"
)

var (
	seeds = flag.Int("difftest.seeds", 40, "random cases drawn per run (-short: a quarter)")
	keep  = flag.Bool("difftest.keep", false, "write each failure found, shrunk, to testdata/ as a fixture")
)

// TestFixtures replays the kept cases over the in-memory backends.
func TestFixtures(t *testing.T) {
	cases, err := Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no fixture in testdata")
	}
	enc := wordvec.New(nil, wordvec.Options{})
	for _, c := range cases {
		diffs, err := Compare(context.Background(), enc, c, File, Snapshot, Reversed, NTriples, Freebase, Neighbourhoods)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range diffs {
			t.Errorf("%s: %v", c.Note, d)
		}
	}
}

// TestRandom draws cases and compares the in-memory backends on them: the
// KG read from its file, its snapshot, the KG numbered otherwise, its
// N-Triples export read back and (one case in eight) built into a
// snapshot, the KG in Freebase's shape read as a dump, and each
// question's neighbourhood. A failure is shrunk and printed as a
// fixture (written to testdata with -difftest.keep).
func TestRandom(t *testing.T) {
	n := *seeds
	if testing.Short() {
		n = max(1, n/4)
	}
	enc := wordvec.New(nil, wordvec.Options{})
	for seed := uint64(1); seed <= uint64(n); seed++ {
		c := Generate(seed, 6)
		dir := ""
		if *keep {
			dir = "testdata"
		}
		others := []Backend{Snapshot, Reversed, NTriples, Freebase, Neighbourhoods}
		if seed%8 == 1 {
			// kg build makes scratch files for a quarter of a second:
			// one case in eight.
			others = append(others, Built)
		}
		Check(t, enc, c, dir, File, others...)
	}
}
