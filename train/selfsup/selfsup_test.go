package selfsup

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/projection/compose"
	"github.com/stem-kgqa/stem/projection/pattern"
	"github.com/stem-kgqa/stem/schema"
)

// familyKG is a small family with a hub: every person has the one gender
// "female" or "male", and 40 films have the genre "drama", far more edges
// than the two "directed" ones.
func familyKG(t testing.TB) *kg.Graph {
	t.Helper()
	b := kg.NewBuilder()
	for _, tr := range [][3]string{
		{"ada", "spouse", "bruno"}, {"bruno", "spouse", "ada"},
		{"ada", "child", "clara"}, {"bruno", "child", "clara"}, {"ada", "child", "david"},
		{"clara", "nationality", "norway"}, {"david", "nationality", "norway"}, {"bruno", "nationality", "sweden"},
		{"ada", "gender", "female"}, {"clara", "gender", "female"}, {"bruno", "gender", "male"}, {"david", "gender", "male"},
		{"film_a", "directed_by", "clara"}, {"film_b", "directed_by", "david"},
	} {
		b.Add(tr[0], tr[1], tr[2])
	}
	for i := range 40 {
		b.Add(fmt.Sprintf("film_%02d", i), "genre", "drama")
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestSynthesize(t *testing.T) {
	g := familyKG(t)
	exs, st, err := Synthesize(context.Background(), g, Options{MaxAnswers: 30}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Relations != 6 || st.Examples != len(exs) || st.Paths == 0 || st.Instances < st.Paths {
		t.Fatalf("stats %+v", st)
	}
	// Every example's path reaches, from its entity, exactly Answers
	// entities, and the question names the entity.
	for _, ex := range exs {
		id, ok := g.Entity(ex.Mention)
		if !ok {
			t.Fatalf("%q: mention %q is no entity", ex.Question, ex.Mention)
		}
		if n := pattern.Reach(g, []int32{id}, ex.Path, 1000); n != ex.Answers {
			t.Errorf("%q: path %v reaches %d entities, example says %d", ex.Question, ex.Path, n, ex.Answers)
		}
		if !strings.Contains(ex.Question, ex.Mention) {
			t.Errorf("%q does not name %q", ex.Question, ex.Mention)
		}
	}
	// Starts are drawn per relation: the two "directed_by" edges are
	// walked though "genre" has forty, and every relation starts a path
	// both ways.
	first := map[schema.Step]bool{}
	for _, ex := range exs {
		first[ex.Path[0]] = true
	}
	for _, rel := range []string{"spouse", "child", "nationality", "gender", "directed_by", "genre"} {
		for _, d := range []schema.Direction{schema.Forward, schema.Inverse} {
			if !first[schema.Step{Rel: rel, Dir: d}] {
				t.Errorf("no path starts with %s %v", rel, d)
			}
		}
	}
	// The paths through the hub that reach the forty films are left out
	// and counted: "drama" has 40 films, more than MaxAnswers.
	if st.TooManyAnswers == 0 {
		t.Error("no walk left out for reaching too many answers")
	}
	for _, ex := range exs {
		if ex.Answers > 30 {
			t.Errorf("%q reaches %d answers, more than MaxAnswers", ex.Question, ex.Answers)
		}
	}
	// The same seed writes the same questions; another seed others.
	again, _, err := Synthesize(context.Background(), g, Options{MaxAnswers: 30}, nil)
	if err != nil || !slices.EqualFunc(exs, again, sameExample) {
		t.Errorf("a second run differs (%v)", err)
	}
	other, _, err := Synthesize(context.Background(), g, Options{MaxAnswers: 30, Seed: 7}, nil)
	if err != nil || slices.EqualFunc(exs, other, sameExample) {
		t.Errorf("seed 7 writes the same questions (%v)", err)
	}
}

func sameExample(a, b Example) bool {
	return a.Question == b.Question && a.Mention == b.Mention && a.Answers == b.Answers && slices.Equal(a.Path, b.Path)
}

func TestSynthesizeErrors(t *testing.T) {
	ctx := context.Background()
	if _, _, err := Synthesize(ctx, nil, Options{}, nil); err == nil || !strings.Contains(err.Error(), "no triples") {
		t.Errorf("no KG: err = %v", err)
	}
	// Every start reaches two entities in one hop.
	b := kg.NewBuilder()
	for _, tr := range [][3]string{{"a1", "r", "b1"}, {"a1", "r", "b2"}, {"a2", "r", "b1"}, {"a2", "r", "b2"}} {
		b.Add(tr[0], tr[1], tr[2])
	}
	g, _ := b.Build()
	if _, _, err := Synthesize(ctx, g, Options{MaxAnswers: 1, MaxHops: 1}, nil); err == nil || !strings.Contains(err.Error(), "reaches at most 1 entities") {
		t.Errorf("every path too wide: err = %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := Synthesize(cancelled, familyKG(t), Options{}, nil); err == nil {
		t.Error("cancelled context: no error")
	}
}

// TestPhrasings checks the templates: several distinct questions per
// path, each naming the entity and every relation (or its alternative
// noun), written as nouns, possessives and passive verbs.
func TestPhrasings(t *testing.T) {
	spouseNat := []schema.Step{{Rel: "spouse"}, {Rel: "nationality"}}
	byDirector := []schema.Step{{Rel: "directed_by", Dir: schema.Inverse}, {Rel: "release_year"}}
	tests := []struct {
		steps []schema.Step
		alts  map[string][]string
		// words each question holds one of, per relation
		words [][]string
		// some of the questions written
		some []string
	}{
		{spouseNat, nil, [][]string{{"spouse"}, {"nationality"}}, []string{
			"what is the nationality of X 's spouse ?",
			"what is X 's spouse 's nationality ?",
			"what is the nationality of the spouse of X ?",
		}},
		{byDirector, nil, [][]string{{"directed"}, {"release year"}}, []string{
			"what is the release year of the ones directed by X ?",
			"the release year of the ones X directed ?",
		}},
		{spouseNat, map[string][]string{"spouse": {"wife"}}, [][]string{{"spouse", "wife"}, {"nationality"}}, []string{
			"what is X 's wife 's nationality ?",
		}},
	}
	for _, tt := range tests {
		ph := phraser{rng: rand.New(rand.NewPCG(1, 2)), alts: tt.alts}
		var all []string
		for range 40 {
			all = append(all, ph.phrasings("X", tt.steps, 3)...)
		}
		slices.Sort(all)
		all = slices.Compact(all)
		if len(all) < 10 {
			t.Errorf("%v: only %d distinct phrasings: %q", tt.steps, len(all), all)
		}
		for _, q := range all {
			if !strings.Contains(q, "X") {
				t.Errorf("%q does not name the entity", q)
			}
			for _, ws := range tt.words {
				if !slices.ContainsFunc(ws, func(w string) bool { return strings.Contains(q, w) }) {
					t.Errorf("%q names none of %q", q, ws)
				}
			}
		}
		for _, q := range tt.some {
			if !slices.Contains(all, q) {
				t.Errorf("%v: %q never written; wrote %q", tt.steps, q, all)
			}
		}
		ph = phraser{rng: rand.New(rand.NewPCG(1, 2))}
		if got := ph.phrasings("X", tt.steps, 3); len(got) != 3 {
			t.Errorf("%v: %d phrasings, want 3", tt.steps, len(got))
		}
	}
}

// lexicon is a stand-in models.Lexicon.
type lexicon map[string][]string

func (l lexicon) Related(word, rel string) float32 {
	if slices.Contains(l[rel], word) {
		return 0.9
	}
	return 0
}

func (l lexicon) Narrower(rel string) []string { return l[rel] }

func TestTrain(t *testing.T) {
	ctx := context.Background()
	g := familyKG(t)
	enc := wordvec.New(nil, wordvec.Options{})
	o := Options{MaxAnswers: 30, Lexicon: lexicon{"spouse": {"wife", "husband"}}}
	m, st, err := Train(ctx, g, enc, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.NumPaths() != st.Paths || m.Questions() != st.Examples {
		t.Errorf("model has %d paths from %d questions; synthesis wrote %d paths, %d questions", m.NumPaths(), m.Questions(), st.Paths, st.Examples)
	}
	if pr := m.Prior(); pr.Planner != compose.Name || pr.Weight != DefaultPriorWeight {
		t.Errorf("prior %+v, want compose at %v", pr, DefaultPriorWeight)
	}
	// The lexicon's nouns are written in.
	exs, _, _ := Synthesize(ctx, g, o, nil)
	if !slices.ContainsFunc(exs, func(ex Example) bool {
		return strings.Contains(ex.Question, "wife") || strings.Contains(ex.Question, "husband")
	}) {
		t.Error("no question says wife or husband for spouse")
	}
	// The prior survives a file.
	path := filepath.Join(t.TempDir(), "m.stempat")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := pattern.Load(path, enc)
	if err != nil || back.Prior() != m.Prior() {
		t.Fatalf("reloaded prior %+v, %v", back.Prior(), err)
	}
	// Planned beside compose, the model keeps compose's reading of a
	// question it can read, and its scores rank the paths it was
	// trained on.
	learnt, err := pattern.New(back, enc, pattern.Config{})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := compose.New(ctx, g, enc, compose.Config{Learnt: learnt, LearntWeight: back.Prior().Weight})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ q, ent, want string }{
		{"what is the nationality of ada 's child ?", "ada", "child> nationality>"},
		{"who is the spouse of bruno ?", "bruno", "spouse>"},
		{"which films were directed by clara ?", "clara", "directed_by<"},
	} {
		pr, err := pl.Predict(ctx, tt.q, []string{tt.ent}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := stepsString(pr.Paths[0].Steps); got != tt.want {
			t.Errorf("%q: best path %q, want %q", tt.q, got, tt.want)
		}
	}
	scores, err := learnt.ScorePaths(ctx, "what is the nationality of ada 's child ?", []string{"ada"},
		[][]schema.Step{{{Rel: "child"}, {Rel: "nationality"}}, {{Rel: "gender"}, {Rel: "gender", Dir: schema.Inverse}}})
	if err != nil || len(scores) != 2 || !(scores[0] > scores[1]) {
		t.Errorf("learnt scores %v (%v): want the trained reading first", scores, err)
	}
}

func stepsString(ss []schema.Step) string {
	var b []string
	for _, s := range ss {
		b = append(b, s.Rel+map[schema.Direction]string{schema.Forward: ">", schema.Inverse: "<", schema.Either: "~"}[s.Dir])
	}
	return strings.Join(b, " ")
}
