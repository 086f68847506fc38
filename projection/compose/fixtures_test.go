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
	"github.com/stem-kgqa/stem/models/wordnet"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/train/selfsup"
)

// setupFile is a file `stem setup` leaves in the cache directory, opened
// once per test binary; tests skip without it (the README's test command
// runs stem setup first).
type setupFile[T any] struct {
	once sync.Once
	v    T
	err  error
}

func (f *setupFile[T]) get(t testing.TB, what string, open func(cacheDir string) (T, error)) T {
	t.Helper()
	f.once.Do(func() {
		dir, err := wordvec.DefaultCacheDir()
		if err != nil {
			f.err = err
			return
		}
		f.v, f.err = open(dir)
	})
	if f.err != nil {
		t.Skipf("%s not available (run stem setup): %v", what, f.err)
	}
	return f.v
}

var (
	realEnc setupFile[models.Encoder]
	realLex setupFile[models.Lexicon]
)

// realEncoder returns the default word-vector encoder.
func realEncoder(t testing.TB) models.Encoder {
	return realEnc.get(t, "real word vectors", func(dir string) (models.Encoder, error) {
		v, err := wordvec.Open(filepath.Join(dir, wordvec.DefaultVectorsFile))
		if err != nil {
			return nil, err
		}
		return wordvec.New(v, wordvec.Options{}), nil
	})
}

// realLexicon returns the WordNet lexicon.
func realLexicon(t testing.TB) models.Lexicon {
	return realLex.get(t, "WordNet lexicon", func(dir string) (models.Lexicon, error) {
		l, err := wordnet.Open(filepath.Join(dir, wordnet.DefaultFile))
		if err != nil {
			return nil, err
		}
		return l, nil
	})
}

// TestOwnKGs answers the hand-written questions of testdata/*.questions.tsv
// over their KGs as a new user would: `stem ask --kg KG` with no planner
// model, no training questions and no LLM, so --planner auto is the
// compose planner and the entity is linked from the text; then again with
// a planner model trained from the KG alone (`stem train planner
// --from-kg KG`, package train/selfsup). Every question must get exactly
// its answers.
func TestOwnKGs(t *testing.T) {
	enc, lex := realEncoder(t), realLexicon(t)
	ctx := context.Background()
	files, err := filepath.Glob(filepath.Join("testdata", "*.questions.tsv"))
	if err != nil || len(files) < 4 {
		t.Fatalf("want at least four fixture KGs, found %v (%v)", files, err)
	}
	for _, qf := range files {
		name := strings.TrimSuffix(filepath.Base(qf), ".questions.tsv")
		t.Run(name, func(t *testing.T) {
			a := ownAssets(ctx, t, name)
			m, _, err := selfsup.Train(ctx, a.Graph, enc, selfsup.Options{Lexicon: lex}, nil)
			if err != nil {
				t.Fatal(err)
			}
			model := filepath.Join(t.TempDir(), name+".stempat")
			if err := m.Save(model); err != nil {
				t.Fatal(err)
			}
			for _, planner := range []string{"compose", "trained from the KG"} {
				s := plan.DefaultSettings()
				if planner != "compose" {
					s.PlannerModel = model
				}
				p, _, err := plan.Open(ctx, s, a)
				if err != nil {
					t.Fatal(err)
				}
				answerAll(ctx, t, p, planner, readCases(t, qf))
			}
		})
	}
}

// answerAll asks p every case and reports those answered wrong.
func answerAll(ctx context.Context, t *testing.T, p *plan.Pipeline, planner string, cases []fixtureCase) {
	t.Helper()
	for _, c := range cases {
		res, err := p.Answer(ctx, plan.Query{Question: c.q})
		if err != nil {
			t.Errorf("%s: %q: %v", planner, c.q, err)
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
			t.Errorf("%s: %q: answers %v, want %v; linked %v; plans %v", planner, c.q, got, c.want, res.Links, plans)
		}
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

// ownAssets loads testdata/NAME.tsv with what `stem ask --kg` opens
// beside it: the entity index, the encoder and the lexicon.
func ownAssets(ctx context.Context, t *testing.T, name string) plan.Assets {
	t.Helper()
	enc, lex := realEncoder(t), realLexicon(t)
	g, err := kg.Load(ctx, filepath.Join("testdata", name+".tsv"), kg.FormatTSV)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := kgvec.Build(ctx, g, enc, nil)
	if err != nil {
		t.Fatal(err)
	}
	return plan.Assets{Graph: g, Entities: ents, Encoder: enc, Lexicon: lex}
}

// openCompose opens testdata/NAME.tsv as `stem ask --kg` does with
// --planner compose: no planner model, no training, no LLM.
func openCompose(ctx context.Context, t *testing.T, name string) *plan.Pipeline {
	t.Helper()
	s := plan.DefaultSettings()
	s.Planner = "compose"
	p, _, err := plan.Open(ctx, s, ownAssets(ctx, t, name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
