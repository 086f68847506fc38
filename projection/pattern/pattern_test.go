package pattern

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/linking"
	"github.com/stem-kgqa/stem/schema"
)

func examples(t testing.TB, qs []benchmark.Question) []Example {
	t.Helper()
	out := make([]Example, len(qs))
	for i, q := range qs {
		ex := Example{Question: q.Text, Answers: len(q.Answers)}
		for _, e := range q.Entities {
			if sp, ok := linking.Find(q.Text, e); ok {
				ex.Mentions = append(ex.Mentions, q.Text[sp.Start:sp.End])
			}
		}
		for _, g := range q.Gold {
			ex.Paths = append(ex.Paths, g.Steps)
		}
		out[i] = ex
	}
	return out
}

func demoData(t testing.TB) (*kg.Graph, []benchmark.Question) {
	t.Helper()
	g, err := kg.ReadTSV(demo.KG(), demo.KGName)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := benchmark.ReadPathQuestion(context.Background(), bytes.NewReader(demo.Questions()), demo.QuestionsName)
	if err != nil {
		t.Fatal(err)
	}
	return g, qs
}

func TestPlanGraphsAndErrors(t *testing.T) {
	ctx := context.Background()
	g, qs := demoData(t)
	enc := wordvec.New(nil, wordvec.Options{})
	exs := examples(t, qs)
	// A path over a relation the KG lacks must be dropped with a note.
	exs = append(exs, Example{Question: "who directed Inception", Mentions: []string{"Inception"}, Paths: [][]schema.Step{{{Rel: "no_such_relation"}}}, Answers: 1})
	m, err := Train(ctx, enc, exs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(m, enc, Config{Graph: g, Beam: 2})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := p.Plan(ctx, projection.Input{Question: "who directed Inception ?", Entities: []string{"Inception"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Candidates) != 2 {
		t.Fatalf("got %d candidates, want 2", len(plan.Candidates))
	}
	want := schema.Path("Inception", "directed_by").String()
	if got := plan.Candidates[0].Graph.String(); got != want {
		t.Errorf("top graph %s, want %s", got, want)
	}
	if plan.Strategy != schema.Precision {
		t.Errorf("strategy %v, want precision", plan.Strategy)
	}
	if !strings.Contains(strings.Join(plan.Notes, "\n"), "no_such_relation") {
		t.Errorf("notes %q do not mention the dropped relation", plan.Notes)
	}
	for _, c := range plan.Candidates {
		if strings.Contains(c.Graph.String(), "no_such_relation") {
			t.Errorf("plan kept a relation absent from the KG: %s", c.Graph)
		}
	}
	if _, err := p.Plan(ctx, projection.Input{Question: "   ", Entities: []string{"Inception"}}); !errors.Is(err, ErrEmptyQuestion) {
		t.Errorf("empty question: err = %v", err)
	}
	if _, err := p.Plan(ctx, projection.Input{Question: "who directed it"}); err == nil {
		t.Error("question without entity: no error")
	}
	if _, err := Train(ctx, enc, []Example{{Question: "x"}}, Options{}); err == nil {
		t.Error("Train without gold paths: no error")
	}
}

func TestModelFile(t *testing.T) {
	ctx := context.Background()
	_, qs := demoData(t)
	enc := wordvec.New(nil, wordvec.Options{})
	m, err := Train(ctx, enc, examples(t, qs), Options{K: 7})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "m.stempat")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	m2, err := Load(path, enc)
	if err != nil {
		t.Fatal(err)
	}
	if m2.Examples() != m.Examples() || m2.NumPaths() != m.NumPaths() || m2.Options().K != 7 || m2.Encoder() != enc.Name() {
		t.Errorf("round trip: got %d examples %d paths K=%d, want %d %d 7", m2.Examples(), m2.NumPaths(), m2.Options().K, m.Examples(), m.NumPaths())
	}
	p1, _ := New(m, enc, Config{})
	p2, _ := New(m2, enc, Config{})
	a, _ := p1.Predict(ctx, "who directed inception ?", []string{"Inception"}, nil)
	b, _ := p2.Predict(ctx, "who directed inception ?", []string{"Inception"}, nil)
	if formatSteps(a.Paths[0].Steps) != formatSteps(b.Paths[0].Steps) || a.Paths[0].Score != b.Paths[0].Score {
		t.Errorf("loaded model plans differently: %v vs %v", a.Paths[0], b.Paths[0])
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	newer := bytes.Clone(data)
	binary.LittleEndian.PutUint32(newer[8:], Version+1)
	older := bytes.Clone(data)
	binary.LittleEndian.PutUint32(older[8:], 1)
	flipped := bytes.Clone(data)
	flipped[len(flipped)-10] ^= 0xff
	other := wordvec.New(nil, wordvec.Options{NGramDims: 64})
	for _, tc := range []struct {
		name string
		data []byte
		enc  interface {
			Name() string
			Dim() int
		}
		want error
	}{
		{"truncated", data[:len(data)/2], nil, ErrCorrupt},
		{"header only", data[:10], nil, ErrCorrupt},
		{"flipped byte", flipped, nil, ErrCorrupt},
		{"newer version", newer, nil, ErrNewerVersion},
		{"version 1 (no classifier)", older, nil, ErrOldVersion},
		{"not a model", []byte("hello world, not a model"), nil, ErrNotModel},
		{"empty", nil, nil, ErrNotModel},
		{"other encoder", data, other, ErrEncoderMismatch},
	} {
		var err error
		if tc.enc != nil {
			_, err = Decode(tc.data, other)
		} else {
			_, err = Decode(tc.data, enc)
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := New(m, other, Config{}); !errors.Is(err, ErrEncoderMismatch) {
		t.Errorf("New with another encoder: err = %v", err)
	}
}

func BenchmarkPredictDemo(b *testing.B) {
	ctx := context.Background()
	g, qs := demoData(b)
	enc := wordvec.New(nil, wordvec.Options{})
	m, _ := Train(ctx, enc, examples(b, qs), Options{})
	p, _ := New(m, enc, Config{Graph: g})
	for b.Loop() {
		if _, err := p.Predict(ctx, "in which country was the director of inception born ?", []string{"Inception"}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// orderExamples are questions whose two templates use the same words and
// differ only in which relation is named before the entity: "the parent of
// X 's son" asks for X's children's parents, "the son of X 's parent" for
// X's parents' children.
func orderExamples() (train []Example, test []Example) {
	child := Path{{Rel: "children"}, {Rel: "parents"}}
	parent := Path{{Rel: "parents"}, {Rel: "children"}}
	names := []string{"anna", "boris", "carla", "dmitri", "elena", "fabio", "greta", "hugo", "ines", "jonas", "karl", "lena"}
	for i, n := range names {
		exs := []Example{
			{Question: "the parent of " + n + " 's son ?", Mentions: []string{n}, Paths: [][]schema.Step{child}, Answers: 1},
			{Question: "the son of " + n + " 's parent ?", Mentions: []string{n}, Paths: [][]schema.Step{parent}, Answers: 2},
		}
		if i < 8 {
			train = append(train, exs...)
		} else {
			test = append(test, exs...)
		}
	}
	return train, test
}

// TestClassifierWordOrder checks that the classifier tells apart templates
// that differ only in word order around the entity, on entities it has not
// seen, and that the position-tagged features are what does it.
func TestClassifierWordOrder(t *testing.T) {
	ctx := context.Background()
	enc := wordvec.New(nil, wordvec.Options{})
	train, test := orderExamples()
	m, err := Train(ctx, enc, train, Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(m, enc, Config{Beam: 2, Options: Options{Classifier: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range test {
		pr, err := p.Predict(ctx, ex.Question, nil, ex.Mentions)
		if err != nil {
			t.Fatal(err)
		}
		want := formatSteps(ex.Paths[0])
		if got := formatSteps(pr.Paths[0].Steps); got != want {
			t.Errorf("%q: top path %s, want %s", ex.Question, got, want)
		}
		if pr.Paths[0].Score <= pr.Paths[1].Score {
			t.Errorf("%q: scores %v and %v do not separate the paths", ex.Question, pr.Paths[0].Score, pr.Paths[1].Score)
		}
	}
	f := strings.Join(features("the parent of ent 's son"), "|")
	for _, want := range []string{"pL:parent", "pR:son", "pL2:parent", "b:ent s"} {
		if !strings.Contains(f, want) {
			t.Errorf("features %q lack %q", f, want)
		}
	}
}

// TestTrainDeterministic checks that a seed fixes the model file byte for
// byte, and that another seed changes it.
func TestTrainDeterministic(t *testing.T) {
	ctx := context.Background()
	enc := wordvec.New(nil, wordvec.Options{})
	train, _ := orderExamples()
	dir := t.TempDir()
	read := func(name string, seed uint64) []byte {
		m, err := Train(ctx, enc, train, Options{Seed: seed, Epochs: 5})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := m.Save(path); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b, c := read("a", 1), read("b", 1), read("c", 2)
	if !bytes.Equal(a, b) {
		t.Error("two trainings with seed 1 wrote different model files")
	}
	if bytes.Equal(a, c) {
		t.Error("seeds 1 and 2 wrote the same model file")
	}
	// Without a classifier the planner must still plan, by the vote alone.
	m, err := Train(ctx, enc, train, Options{Epochs: -1})
	if err != nil {
		t.Fatal(err)
	}
	if m.f.Classifier != nil {
		t.Fatal("Epochs -1 trained a classifier")
	}
	p, _ := New(m, enc, Config{})
	pr, err := p.Predict(ctx, "the parent of anna 's son ?", nil, []string{"anna"})
	if err != nil || len(pr.Paths) == 0 {
		t.Fatalf("vote-only planner: %v, %d paths", err, len(pr.Paths))
	}
}

func TestNewRejectsModelForAnotherKG(t *testing.T) {
	ctx := context.Background()
	enc := wordvec.New(nil, wordvec.Options{})
	m, err := Train(ctx, enc, []Example{{Question: "who directed inception", Mentions: []string{"inception"},
		Paths: [][]schema.Step{{{Rel: "directed_by", Dir: schema.Forward}}}, Answers: 1}}, Options{Epochs: -1})
	if err != nil {
		t.Fatal(err)
	}
	other, err := kg.ReadTSV(strings.NewReader("a\tspouse\tb\n"), "other.tsv")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(m, enc, Config{Graph: other}); !errors.Is(err, ErrOtherKG) {
		t.Errorf("New over another KG: err = %v, want ErrOtherKG", err)
	}
	same, _ := kg.ReadTSV(strings.NewReader("Inception\tdirected_by\tNolan\n"), "same.tsv")
	if _, err := New(m, enc, Config{Graph: same}); err != nil {
		t.Errorf("New over the model's KG: %v", err)
	}
}

// TestExplorePaths lists a small graph's relation paths by hand.
func TestExplorePaths(t *testing.T) {
	g, err := kg.ReadTSV(strings.NewReader("a\tr1\tb\nb\tr2\tc\nd\tr3\ta\nb\tr1\te\n"), "g.tsv")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := g.Entity("a")
	str := func(ps []Path) []string {
		var out []string
		for _, p := range ps {
			out = append(out, formatSteps(p))
		}
		return out
	}
	for _, tc := range []struct {
		hops       int
		undirected bool
		want       string
	}{
		{1, false, "r1> | r3<"},
		{1, true, "r1~ | r3~"},
		// A step back over the relation just taken is left out (r1> r1<,
		// r3< r3>, and any repeat when undirected); a chain (r1> r1>) is
		// kept.
		{2, false, "r1> | r3< | r1> r1> | r1> r2>"},
		{2, true, "r1~ | r3~ | r1~ r2~"},
	} {
		got := strings.Join(str(explorePaths(g, []int32{a}, tc.hops, tc.undirected)), " | ")
		if got != tc.want {
			t.Errorf("explorePaths(hops %d, undirected %v) = %q, want %q", tc.hops, tc.undirected, got, tc.want)
		}
	}
	if got := explorePaths(g, nil, 2, true); len(got) != 0 {
		t.Errorf("no start: %v, want none", str(got))
	}
}

// TestPlanOwnGraph checks planning over a question's own graph: paths are
// checked there with no KG given to the planner, a known walkable path
// comes first, and when the graph walks no known path the planner proposes
// a path of the graph it never saw.
func TestPlanOwnGraph(t *testing.T) {
	ctx := context.Background()
	enc := wordvec.New(nil, wordvec.Options{})
	either := func(rels ...string) [][]schema.Step {
		var p []schema.Step
		for _, r := range rels {
			p = append(p, schema.Step{Rel: r, Dir: schema.Either})
		}
		return [][]schema.Step{p}
	}
	var exs []Example
	for _, c := range []string{"jamaica", "france", "peru", "chile", "kenya", "japan"} {
		exs = append(exs,
			Example{Question: "what language do people in " + c + " speak", Mentions: []string{c}, Paths: either("location.country.languages_spoken"), Answers: 1},
			Example{Question: "where was " + c + " founded", Mentions: []string{c}, Paths: either("location.location.founded_in"), Answers: 1},
			Example{Question: "what currency does " + c + " use", Mentions: []string{c}, Paths: either("location.country.currency_used"), Answers: 1})
	}
	m, err := Train(ctx, enc, exs, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(m, enc, Config{Beam: 2})
	if err != nil {
		t.Fatal(err)
	}
	// The strategy is Breadth when the beam's walkable paths reach more
	// than one entity together, though each reaches one. A known path
	// whose relation the KG has, but not from Spain, is demoted: the
	// projection says so (Demoted), a relation the KG lacks is dropped.
	for _, tc := range []struct {
		name, kb, want string
		strategy       schema.Strategy
		demoted        bool
	}{
		{"known path walkable", "Spain\tlocation.country.languages_spoken\tSpanish\nSpain\tlocation.location.founded_in\tx\n", "location.country.languages_spoken", schema.Breadth, false},
		{"known path not walkable, unknown one is", "Spain\tlocation.country.official_language\tSpanish\nSpain\tlocation.country.currency_used\tEuro\n", "location.country.currency_used", schema.Breadth, false},
		{"only an unknown path", "Spain\tlocation.country.official_language\tSpanish\n", "location.country.official_language", schema.Precision, false},
		{"two paths, one entity", "Spain\tlocation.country.official_language\tSpanish\nSpain\tlocation.country.languages_spoken\tSpanish\n", "location.country.languages_spoken", schema.Precision, false},
		{"known path leads nowhere from spain", "Spain\tlocation.country.official_language\tSpanish\nPeru\tlocation.country.languages_spoken\tQuechua\n", "location.country.official_language", schema.Precision, true},
	} {
		g, err := kg.ReadTSV(strings.NewReader(tc.kb), "own.tsv")
		if err != nil {
			t.Fatal(err)
		}
		proj, err := p.Plan(ctx, projection.Input{Question: "what language do people in spain speak", Entities: []string{"Spain"}, Graph: g})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(proj.Candidates) == 0 {
			t.Fatalf("%s: no candidate", tc.name)
		}
		if got := proj.Candidates[0].Graph.Triples[0].Rel; got != tc.want {
			t.Errorf("%s: first candidate's relation %q, want %q", tc.name, got, tc.want)
		}
		if proj.Strategy != tc.strategy {
			t.Errorf("%s: strategy %v, want %v", tc.name, proj.Strategy, tc.strategy)
		}
		if got := proj.Demoted > 0; got != tc.demoted {
			t.Errorf("%s: demoted %v (score %g), want %v", tc.name, got, proj.Demoted, tc.demoted)
		}
		// A one-step plan that leads nowhere lacks only its last edge.
		if proj.DemotedLast != tc.demoted {
			t.Errorf("%s: demoted last %v, want %v", tc.name, proj.DemotedLast, tc.demoted)
		}
	}
}

// TestUnmaskedModel checks that a model trained on questions with no
// mention (WebQSP's RoG files name no topic entity) plans the question
// unmasked: masked, the two questions below read the same and one of them
// must get the other's path.
func TestUnmaskedModel(t *testing.T) {
	ctx := context.Background()
	enc := wordvec.New(nil, wordvec.Options{})
	one := func(rel string) [][]schema.Step { return [][]schema.Step{{{Rel: rel, Dir: schema.Either}}} }
	exs := []Example{
		{Question: "tell me about france", Paths: one("location.country.capital"), Answers: 1},
		{Question: "tell me about mozart", Paths: one("music.composer.compositions"), Answers: 1},
	}
	m, err := Train(ctx, enc, exs, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !m.unmasked {
		t.Fatal("a model trained on no mention is not marked unmasked")
	}
	p, err := New(m, enc, Config{Beam: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ q, ent, want string }{
		{"tell me about france", "france", "location.country.capital"},
		{"tell me about mozart", "mozart", "music.composer.compositions"},
	} {
		pr, err := p.Predict(ctx, tc.q, []string{tc.ent}, []string{tc.ent})
		if err != nil {
			t.Fatal(err)
		}
		if got := pr.Paths[0].Steps[0].Rel; got != tc.want {
			t.Errorf("%q: top path %s, want %s", tc.q, got, tc.want)
		}
	}
	exs[0].Mentions, exs[1].Mentions = []string{"france"}, []string{"mozart"}
	if m, err = Train(ctx, enc, exs, Options{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if m.unmasked {
		t.Error("a model trained on masked mentions is marked unmasked")
	}
}

func TestTrainDiverges(t *testing.T) {
	ctx := context.Background()
	enc := wordvec.New(nil, wordvec.Options{})
	train, _ := orderExamples()
	if _, err := Train(ctx, enc, train, Options{Seed: 1, LearningRate: 1e30}); !errors.Is(err, ErrDiverged) {
		t.Fatalf("learning rate 1e30: error %v, want ErrDiverged", err)
	}
}

// TestVariants: paths gold for the same training questions are variants
// of one another, and a Breadth plan marks the variants of its first
// candidate; a path gold beside many others (a person's nationality and
// back) is no variant of any of them.
func TestVariants(t *testing.T) {
	ctx := context.Background()
	enc := wordvec.New(nil, wordvec.Options{})
	p1 := func(rel string) []schema.Step { return []schema.Step{{Rel: rel, Dir: schema.Either}} }
	spoken, spokenIn := p1("location.country.languages_spoken"), p1("language.human_language.countries_spoken_in")
	spouse, nat := p1("people.person.spouse_s"), []schema.Step{{Rel: "people.person.nationality", Dir: schema.Either}, {Rel: "people.person.nationality", Dir: schema.Either}}
	birth := p1("people.person.place_of_birth")
	exs := []Example{
		{Question: "what languages are spoken in france", Mentions: []string{"france"}, Paths: [][]schema.Step{spoken, spokenIn}, Answers: 3},
		{Question: "what language do people in peru speak", Mentions: []string{"peru"}, Paths: [][]schema.Step{spoken, spokenIn}, Answers: 3},
		{Question: "who is bob married to", Mentions: []string{"bob"}, Paths: [][]schema.Step{spouse, nat}, Answers: 1},
		{Question: "who did ann marry", Mentions: []string{"ann"}, Paths: [][]schema.Step{spouse, nat}, Answers: 1},
		{Question: "where is carl from", Mentions: []string{"carl"}, Paths: [][]schema.Step{birth, nat}, Answers: 1},
		{Question: "where was dora born", Mentions: []string{"dora"}, Paths: [][]schema.Step{birth, nat}, Answers: 1},
	}
	m, err := Train(ctx, enc, exs, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		a, b []schema.Step
		want float32
	}{
		{spoken, spokenIn, 1},
		{spokenIn, spoken, 1},
		{spouse, nat, 0.5},   // nat is gold beside 4 questions, spouse beside 2 of them
		{birth, spouse, 0},   // never gold together
		{spoken, spoken, 0},  // a path is no variant of itself
		{spoken, p1("x"), 0}, // a path the model never saw
	} {
		if got := m.Variants(tc.a, tc.b); got != tc.want {
			t.Errorf("Variants(%s, %s) = %v, want %v", formatSteps(tc.a), formatSteps(tc.b), got, tc.want)
		}
	}
	for _, tc := range []struct {
		variants float32
		want     bool
	}{{0, true}, {-1, false}} {
		p, err := New(m, enc, Config{Beam: 4, Options: Options{Variants: tc.variants}})
		if err != nil {
			t.Fatal(err)
		}
		proj, err := p.Plan(ctx, projection.Input{Question: "what languages are spoken in chile", Entities: []string{"chile"}, Mentions: []string{"chile"}})
		if err != nil {
			t.Fatal(err)
		}
		if proj.Strategy != schema.Breadth || len(proj.Candidates) < 2 {
			t.Fatalf("plan: %s with %d candidates, want breadth and several", proj.Strategy, len(proj.Candidates))
		}
		rels := func(g schema.Graph) string {
			var out []string
			for _, tr := range g.Triples {
				out = append(out, tr.Rel)
			}
			return strings.Join(out, ",")
		}
		first := rels(proj.Candidates[0].Graph)
		lang := map[string]bool{spoken[0].Rel: true, spokenIn[0].Rel: true}
		for i, c := range proj.Candidates[1:] {
			isVariant := lang[first] && lang[rels(c.Graph)]
			if c.Variant != (isVariant && tc.want) {
				t.Errorf("variants %v: candidate %d (%s after %s) Variant %v", tc.variants, i+1, rels(c.Graph), first, c.Variant)
			}
		}
		if !lang[first] {
			t.Errorf("first candidate %s, want a language path", first)
		}
	}
}

func TestEachExample(t *testing.T) {
	enc := wordvec.New(nil, wordvec.Options{})
	step := func(rels ...string) []schema.Step {
		var out []schema.Step
		for _, r := range rels {
			out = append(out, schema.Step{Rel: r})
		}
		return out
	}
	exs := []Example{
		// Two paths sharing a relation: each relation once.
		{Question: "where did Obama study", Mentions: []string{"Obama"}, Paths: [][]schema.Step{step("education", "institution"), step("education")}, Answers: 1},
		{Question: "who directed Inception", Mentions: []string{"Inception"}, Paths: [][]schema.Step{step("directed_by")}, Answers: 1},
	}
	m, err := Train(context.Background(), enc, exs, Options{Epochs: -1})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	m.EachExample(func(text string, rels []string) { got[text] = rels })
	want := map[string][]string{
		MaskedText("where did Obama study", []string{"Obama"}):      {"education", "institution"},
		MaskedText("who directed Inception", []string{"Inception"}): {"directed_by"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("EachExample: %v, want %v", got, want)
	}
}
