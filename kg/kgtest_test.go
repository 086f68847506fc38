package kg_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/kgtest"
)

func build(t *testing.T, triples [][3]string) *kg.Graph {
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

func TestConformance(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		kgtest.TestAll(t, func(t *testing.T, triples [][3]string) kg.Reader { return build(t, triples) }, kgtest.Config{})
	})
	t.Run("snapshot", func(t *testing.T) {
		kgtest.TestAll(t, func(t *testing.T, triples [][3]string) kg.Reader {
			path := filepath.Join(t.TempDir(), "g.kg")
			if err := kg.WriteSnapshot(path, build(t, triples)); err != nil {
				t.Fatal(err)
			}
			g, err := kg.ReadSnapshot(path)
			if err != nil {
				t.Fatal(err)
			}
			return g
		}, kgtest.Config{})
	})
}

// unsorted breaks the seam's promise that Out is sorted by relation.
type unsorted struct{ *kg.Graph }

func (u unsorted) Out(e int32) []int32 {
	out := slices.Clone(u.Graph.Out(e))
	slices.Reverse(out)
	return out
}

// liar claims every triple exists.
type liar struct{ *kg.Graph }

func (liar) HasTriple(h, r, t int32) bool { return true }

// TestSuiteCatchesBrokenBackends runs the suite on deliberately broken
// backends in a child process and checks that it fails, naming the broken
// method: a suite that passes everything would prove nothing.
func TestSuiteCatchesBrokenBackends(t *testing.T) {
	if os.Getenv("KGTEST_BROKEN") != "" {
		return
	}
	for _, tc := range []struct{ which, want string }{{"unsorted", "is not sorted"}, {"liar", "HasTriple, reversed: true"}} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestBrokenBackend$", "-test.v")
		cmd.Env = append(os.Environ(), "KGTEST_BROKEN="+tc.which)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if err == nil || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%s backend: suite err = %v, output lacks %q:\n%s", tc.which, err, tc.want, out.String())
		}
	}
}

// TestBrokenBackend is the child of TestSuiteCatchesBrokenBackends.
func TestBrokenBackend(t *testing.T) {
	which := os.Getenv("KGTEST_BROKEN")
	if which == "" {
		t.Skip("run by TestSuiteCatchesBrokenBackends")
	}
	kgtest.TestAll(t, func(t *testing.T, triples [][3]string) kg.Reader {
		if which == "liar" {
			return liar{build(t, triples)}
		}
		return unsorted{build(t, triples)}
	}, kgtest.Config{})
}
