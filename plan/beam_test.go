package plan

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/projection/oracle"
	"github.com/stem-kgqa/stem/selection"
	"github.com/stem-kgqa/stem/tracing"
)

// TestBeamSizeText: --beam reads auto or a beam from 1 to MaxBeam, and
// writes back what it read.
func TestBeamSizeText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want BeamSize
		err  bool
	}{
		{"auto", AutoBeam, false},
		{"8", 8, false},
		{"1", 1, false},
		{"64", 64, false},
		{"0", 0, true},
		{"65", 0, true},
		{"-2", 0, true},
		{"eight", 0, true},
		{"8.5", 0, true},
	} {
		var b BeamSize
		err := b.UnmarshalText([]byte(tc.in))
		if (err != nil) != tc.err || (err == nil && b != tc.want) {
			t.Errorf("--beam %q: %v, %v; want %v (error %v)", tc.in, b, err, tc.want, tc.err)
			continue
		}
		if err != nil {
			continue
		}
		if out, _ := b.MarshalText(); string(out) != tc.in {
			t.Errorf("--beam %q written back as %q", tc.in, out)
		}
	}
}

// TestOpenTracesSelectorBeam: a selector that records the beam it was
// trained at sets the pipeline's beam when the user gave none; a beam
// the user gives wins; a selector file written before the beam was
// recorded, and no selector, leave the default beam.
func TestOpenTracesSelectorBeam(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, beam int) string {
		m := selection.Default()
		m.Beam = beam
		path := filepath.Join(dir, name)
		if err := m.Save(path); err != nil {
			t.Fatal(err)
		}
		return path
	}
	sel8, sel3, old := write("sel8.json", 8), write("sel3.json", 3), write("old.json", 0)
	if b, err := os.ReadFile(old); err != nil || strings.Contains(string(b), `"beam"`) {
		t.Fatalf("a selector with no beam is written with one (%v):\n%s", err, b)
	}
	for _, tc := range []struct {
		name     string
		selector string
		beam     BeamSize
		want     int
	}{
		{"selector's recorded beam", sel8, AutoBeam, 8},
		{"another recorded beam", sel3, AutoBeam, 3},
		{"the user's beam wins", sel8, 2, 2},
		{"the user's beam wins, even the default's", sel8, 4, 4},
		{"old selector file: default beam", old, AutoBeam, 4},
		{"old selector file, the user's beam", old, 6, 6},
		{"no selector: default beam", "", AutoBeam, 4},
		{"no selector, the user's beam", "", 5, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Settings{Planner: "oracle", Beam: tc.beam, Selector: OptionalFile(tc.selector), Strategy: "auto", Retriever: DefaultStrategy,
				Generator: "structural", MaxQuestion: DefaultMaxQuestion, MaxHops: DefaultMaxHops, Tracing: tracing.DefaultConfig()}
			p, closeP, err := Open(context.Background(), s, Assets{})
			defer closeP()
			if err != nil {
				t.Fatal(err)
			}
			pl, ok := p.Planner.(oracle.Planner)
			if !ok {
				t.Fatalf("planner %T, want oracle.Planner", p.Planner)
			}
			if p.Beam != tc.want || pl.Beam != tc.want {
				t.Errorf("pipeline beam %d, planner beam %d, want %d", p.Beam, pl.Beam, tc.want)
			}
		})
	}
}
