package compose_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/plan"
)

var (
	realOnce sync.Once
	realEnc  models.Encoder
	realErr  error
)

// realEncoder returns the default word-vector encoder, or skips when the
// vectors are not installed (stem setup, which the README's test command
// runs first).
func realEncoder(t testing.TB) models.Encoder {
	t.Helper()
	realOnce.Do(func() {
		p, err := wordvec.DefaultPath()
		if err != nil {
			realErr = err
			return
		}
		v, err := wordvec.Open(p)
		if err != nil {
			realErr = err
			return
		}
		realEnc = wordvec.New(v, wordvec.Options{})
	})
	if realErr != nil {
		t.Skipf("real word vectors not available (run stem setup): %v", realErr)
	}
	return realEnc
}

// TestOwnKGs answers the hand-written questions of testdata/*.questions.tsv
// over their KGs as a new user would: `stem ask --kg KG` with no planner
// model, no training questions and no LLM, so --planner auto is the
// compose planner and the entity is linked from the text. Every question
// must get exactly its answers.
func TestOwnKGs(t *testing.T) {
	enc := realEncoder(t)
	ctx := context.Background()
	files, err := filepath.Glob(filepath.Join("testdata", "*.questions.tsv"))
	if err != nil || len(files) < 4 {
		t.Fatalf("want at least four fixture KGs, found %v (%v)", files, err)
	}
	for _, qf := range files {
		name := strings.TrimSuffix(filepath.Base(qf), ".questions.tsv")
		t.Run(name, func(t *testing.T) {
			g, err := kg.Load(ctx, filepath.Join("testdata", name+".tsv"), kg.FormatTSV)
			if err != nil {
				t.Fatal(err)
			}
			ents, err := kgvec.Build(ctx, g, enc, nil)
			if err != nil {
				t.Fatal(err)
			}
			p, _, err := plan.Open(ctx, plan.DefaultSettings(), plan.Assets{Graph: g, Entities: ents, Encoder: enc})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range readCases(t, qf) {
				res, err := p.Answer(ctx, plan.Query{Question: c.q})
				if err != nil {
					t.Errorf("%q: %v", c.q, err)
					continue
				}
				var got []string
				for _, a := range res.Answers {
					got = append(got, a.Name)
				}
				slices.Sort(got)
				if !slices.Equal(got, c.want) {
					var plans []string
					for _, gr := range res.Projection.Graphs() {
						plans = append(plans, gr.String())
					}
					t.Errorf("%q: answers %v, want %v; linked %v; plans %v", c.q, got, c.want, res.Links, plans)
				}
			}
		})
	}
}

type fixtureCase struct {
	q    string
	want []string
}

// readCases reads "question<TAB>entity<TAB>answer|answer" lines; the
// entity column documents the question and is not given to the pipeline.
func readCases(t *testing.T, path string) []fixtureCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []fixtureCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		fs := strings.Split(line, "\t")
		if len(fs) != 3 || fs[2] == "" {
			t.Fatalf("%s:%d: want question<TAB>entity<TAB>answers", path, n)
		}
		want := strings.Split(fs[2], "|")
		slices.Sort(want)
		out = append(out, fixtureCase{fs[0], want})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
