package tracing

import (
	"bufio"
	"bytes"
	"context"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/internal/editdist"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/schema"
)

var (
	demoOnce sync.Once
	demoG    *kg.Graph
	demoErr  error

	realOnce sync.Once
	realEnc  models.Encoder
	realErr  error
)

func demoGraph(t testing.TB) *kg.Graph {
	t.Helper()
	demoOnce.Do(func() { demoG, demoErr = kg.ReadTSV(demo.KG(), demo.KGName) })
	if demoErr != nil {
		t.Fatal(demoErr)
	}
	return demoG
}

// realEncoder returns the word-vector encoder, or skips when the vectors
// are not installed (stem setup).
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
		t.Skipf("real word vectors not available: %v", realErr)
	}
	return realEnc
}

type encCase struct {
	name string
	get  func(testing.TB) models.Encoder
}

var encoders = []encCase{
	{"spelling", func(testing.TB) models.Encoder { return wordvec.New(nil, wordvec.Options{}) }},
	{"wordvec", realEncoder},
}

func newTracer(t testing.TB, enc models.Encoder, cfg Config) *Tracer {
	t.Helper()
	return tracerOver(t, demoGraph(t), enc, cfg)
}

// tracerOver returns a tracer over g with its entities encoded by enc.
func tracerOver(t testing.TB, g *kg.Graph, enc models.Encoder, cfg Config) *Tracer {
	t.Helper()
	ents, err := kgvec.Build(context.Background(), g, enc, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(g, enc, ents, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// rankedNames are a result's answer names in rank order (answerNames
// sorts them).
func rankedNames(r *Result) string {
	var out []string
	for _, a := range r.Answers {
		out = append(out, a.Name)
	}
	return strings.Join(out, ",")
}

func answerNames(r *Result) []string {
	var out []string
	for _, a := range r.Answers {
		out = append(out, a.Name)
	}
	sort.Strings(out)
	return out
}

func mustTrace(t *testing.T, tr *Tracer, req Request) *Result {
	t.Helper()
	res, err := tr.Trace(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Unbacked != 0 {
		t.Fatalf("Unbacked = %d, want 0", res.Unbacked)
	}
	return res
}

func TestTraceQuestions(t *testing.T) {
	cases := []struct {
		name     string
		mention  string
		graph    schema.Graph
		strategy schema.Strategy
		want     []string
		chain    string // one expected line of Chains, if set
	}{
		{"1-hop precision", "inception", schema.Path("Inception", "directed_by"), schema.Precision,
			[]string{"Christopher_Nolan"}, "Inception -> directed_by -> Christopher_Nolan"},
		{"3-hop chain", "inception", schema.Path("Inception", "directed_by", "place_of_birth", "located_in"), schema.Precision,
			[]string{"United_Kingdom"}, "Inception -> directed_by -> Christopher_Nolan -> place_of_birth -> London -> located_in -> United_Kingdom"},
		{"text relations", "inception", schema.Path("Inception", "directed by", "place of birth"), schema.Precision,
			[]string{"London"}, ""},
		{"breadth starred", "inception", schema.Path("Inception", "starred_actors"), schema.Breadth,
			[]string{"Elliot_Page", "Joseph_Gordon-Levitt", "Leonardo_DiCaprio", "Marion_Cotillard", "Tom_Hardy"}, ""},
		{"breadth languages", "switzerland", schema.Path("Switzerland", "language_spoken"), schema.Breadth,
			[]string{"French_language", "German_language", "Italian_language", "Romansh_language"}, ""},
	}
	for _, ec := range encoders {
		t.Run(ec.name, func(t *testing.T) {
			tr := newTracer(t, ec.get(t), DefaultConfig())
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					res := mustTrace(t, tr, Request{Graphs: []schema.Graph{c.graph}, Strategy: c.strategy, Mentions: []string{c.mention}})
					if len(res.Anchors) != 1 || !strings.EqualFold(res.Anchors[0].Name, strings.ReplaceAll(c.mention, " ", "_")) {
						t.Fatalf("anchors %+v", res.Anchors)
					}
					if got := answerNames(res); !slices.Equal(got, c.want) {
						t.Errorf("answers %v, want %v (problems %v)", got, c.want, res.Problems)
					}
					if c.chain != "" && !slices.Contains(res.Chains, c.chain) {
						t.Errorf("chains %q lack %q", res.Chains, c.chain)
					}
				})
			}
		})
	}
}

func TestExactNameAnchorScoresOne(t *testing.T) {
	tr := newTracer(t, wordvec.New(nil, wordvec.Options{}), DefaultConfig())
	res := mustTrace(t, tr, Request{Graphs: []schema.Graph{schema.Path("Inception", "genre")}, Mentions: []string{"INCEPTION"}})
	if len(res.Anchors) != 1 || res.Anchors[0].Name != "Inception" || res.Anchors[0].Score != 1 {
		t.Fatalf("anchors %+v, want Inception with score 1", res.Anchors)
	}
	// A near miss still anchors by spelling.
	res = mustTrace(t, tr, Request{Graphs: []schema.Graph{schema.Path("Inception", "genre")}, Mentions: []string{"inceptoin"}})
	if len(res.Anchors) != 1 || res.Anchors[0].Name != "Inception" || res.Anchors[0].Score >= 1 {
		t.Fatalf("anchors %+v, want Inception below 1", res.Anchors)
	}
}

func id(t *testing.T, g *kg.Graph, name string) int32 {
	t.Helper()
	e, ok := g.Entity(name)
	if !ok {
		t.Fatalf("no entity %s", name)
	}
	return e
}

func tripleID(t *testing.T, g *kg.Graph, h, r, tl string) int32 {
	t.Helper()
	he, te := id(t, g, h), id(t, g, tl)
	re, ok := g.Relation(r)
	if !ok {
		t.Fatalf("no relation %s", r)
	}
	for _, tid := range g.OutRel(he, re) {
		if g.Triple(tid).Tail == te {
			return tid
		}
	}
	t.Fatalf("no triple %s %s %s", h, r, tl)
	return -1
}

func TestAblations(t *testing.T) {
	enc := wordvec.New(nil, wordvec.Options{})
	g := demoGraph(t)
	hardy := tripleID(t, g, "Inception", "starred_actors", "Tom_Hardy")
	starred := Request{Graphs: []schema.Graph{schema.Path("Inception", "starred_actors")}, Strategy: schema.Precision,
		Mentions: []string{"inception"}, Guidance: &Guidance{Triples: map[int32]bool{hardy: true}}}
	five := []string{"Elliot_Page", "Joseph_Gordon-Levitt", "Leonardo_DiCaprio", "Marion_Cotillard", "Tom_Hardy"}

	// Entity bias: "Nolan" is equally far from both Nolans by spelling;
	// guidance on Jonathan must pick him, and the ablation must not.
	jon := id(t, g, "Jonathan_Nolan")
	nolan := Request{Graphs: []schema.Graph{schema.Path("Nolan", "sibling")}, Mentions: []string{"nolan"},
		Guidance: &Guidance{Entities: map[int32]bool{jon: true}}}

	directed := Request{Graphs: []schema.Graph{schema.Path("Inception", "directed_by")}, Mentions: []string{"inception"}}

	cases := []struct {
		name  string
		cfg   func(*Config)
		req   Request
		check func(*testing.T, *Result)
	}{
		{"triple bias picks the guided tie", nil, starred, func(t *testing.T, r *Result) {
			if got := answerNames(r); !slices.Equal(got, []string{"Tom_Hardy"}) {
				t.Errorf("answers %v, want [Tom_Hardy]", got)
			}
			for _, m := range r.Evidence {
				if m.Triple == hardy && m.Bias != 0.5 {
					t.Errorf("bias %v, want 0.5", m.Bias)
				}
			}
		}},
		{"NoTripleBias keeps all ties", func(c *Config) { c.NoTripleBias = true }, starred, func(t *testing.T, r *Result) {
			if got := answerNames(r); !slices.Equal(got, five) {
				t.Errorf("answers %v, want %v", got, five)
			}
		}},
		{"entity bias", nil, nolan, func(t *testing.T, r *Result) {
			if len(r.Anchors) != 1 || r.Anchors[0].Entity != jon {
				t.Errorf("anchors %+v, want Jonathan_Nolan", r.Anchors)
			}
		}},
		{"NoEntityBias", func(c *Config) { c.NoEntityBias = true }, nolan, func(t *testing.T, r *Result) {
			if len(r.Anchors) != 1 || r.Anchors[0].Entity == jon {
				t.Errorf("anchors %+v, want not Jonathan_Nolan", r.Anchors)
			}
		}},
		{"OnlyThreshold branches", func(c *Config) { c.OnlyThreshold = true; c.Theta = 0.3; c.SoftSymbols = true }, directed, func(t *testing.T, r *Result) {
			if len(r.Evidence) < 2 {
				t.Errorf("evidence %d edges, want the low-threshold branches", len(r.Evidence))
			}
		}},
		{"OnlyGreedy", func(c *Config) { c.OnlyGreedy = true; c.Theta = 0.3 },
			Request{Graphs: directed.Graphs, Mentions: directed.Mentions, Strategy: schema.Breadth}, func(t *testing.T, r *Result) {
				if len(r.Evidence) != 1 || r.Evidence[0].TScore < 0.999 {
					t.Errorf("evidence %+v, want the one directed_by edge", r.Evidence)
				}
			}},
		{"MaxBranch", func(c *Config) { c.MaxBranch = 2 },
			Request{Graphs: starred.Graphs, Mentions: starred.Mentions, Strategy: schema.Breadth}, func(t *testing.T, r *Result) {
				if len(r.Answers) != 2 {
					t.Errorf("answers %v, want 2", answerNames(r))
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if c.cfg != nil {
				c.cfg(&cfg)
			}
			tr := newTracer(t, enc, cfg)
			c.check(t, mustTrace(t, tr, c.req))
		})
	}
}

func TestExplicitAnchors(t *testing.T) {
	g := demoGraph(t)
	tr, err := New(g, wordvec.New(nil, wordvec.Options{}), nil, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	res := mustTrace(t, tr, Request{Graphs: []schema.Graph{schema.Path("the film", "directed_by", "place_of_birth")},
		Anchors: []int32{id(t, g, "Inception")}})
	if got := answerNames(res); !slices.Equal(got, []string{"London"}) {
		t.Fatalf("answers %v, want [London]; problems %v", got, res.Problems)
	}
	if res.Anchors[0].Score != 1 || res.Anchors[0].Mention != "Inception" {
		t.Errorf("anchor %+v", res.Anchors[0])
	}
}

func hasProblem(r *Result, sub string) bool {
	for _, p := range r.Problems {
		if strings.Contains(p, sub) {
			return true
		}
	}
	return false
}

func TestBadInput(t *testing.T) {
	g := demoGraph(t)
	tr, err := New(g, wordvec.New(nil, wordvec.Options{}), nil, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	cycle := schema.Graph{Triples: []schema.Triple{
		{Head: "Inception", Rel: "directed_by", Tail: "[ENT1]"},
		{Head: "[ENT1]", Rel: "written_by", Tail: "Inception"}, // reversed on purpose: closes the cycle
	}, Answer: "[ENT1]"}
	cases := []struct {
		name    string
		req     Request
		problem string
		answers []string
	}{
		{"no graphs", Request{Mentions: []string{"inception"}}, "empty evidence", nil},
		{"empty graph", Request{Graphs: []schema.Graph{{}}, Mentions: []string{"inception"}}, "invalid", nil},
		{"unknown mention", Request{Graphs: []schema.Graph{schema.Path("Qwxyz", "genre")}, Mentions: []string{"qwxyz"}}, "no KG entity", nil},
		{"bad anchor id", Request{Graphs: []schema.Graph{schema.Path("x", "genre")}, Anchors: []int32{-3, 1 << 30}}, "not a KG entity", nil},
		{"unbound placeholder", Request{Graphs: []schema.Graph{{Triples: []schema.Triple{
			{Head: "Inception", Rel: "directed_by", Tail: "[ENT1]"},
			{Head: "[ENT2]", Rel: "genre", Tail: "[ENT3]"},
		}, Answer: "[ENT1]"}}, Mentions: []string{"inception"}}, "[ENT2] never bound", []string{"Christopher_Nolan"}},
		{"unknown relation", Request{Graphs: []schema.Graph{schema.Path("Inception", "helmed_by")}, Mentions: []string{"inception"}}, "not a KG relation", nil},
		{"cycle", Request{Graphs: []schema.Graph{cycle}, Mentions: []string{"inception"}}, "", []string{"Christopher_Nolan"}},
		{"mentions from schema", Request{Graphs: []schema.Graph{schema.Path("Inception", "directed_by")}}, "", []string{"Christopher_Nolan"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := mustTrace(t, tr, c.req)
			if c.problem != "" && !hasProblem(res, c.problem) {
				t.Errorf("problems %q lack %q", res.Problems, c.problem)
			}
			if c.answers != nil && !slices.Equal(answerNames(res), c.answers) {
				t.Errorf("answers %v, want %v", answerNames(res), c.answers)
			}
		})
	}
	// The cycle closes only through the written_by edge back to Inception.
	res := mustTrace(t, tr, Request{Graphs: []schema.Graph{cycle}, Mentions: []string{"inception"}})
	wb := tripleID(t, g, "Inception", "written_by", "Christopher_Nolan")
	if !slices.ContainsFunc(res.Evidence, func(m Match) bool { return m.Triple == wb }) {
		t.Errorf("cycle evidence %+v lacks the written_by edge", res.Evidence)
	}
}

func TestDeterministicAndConcurrent(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Workers = 4
	tr := newTracer(t, wordvec.New(nil, wordvec.Options{}), cfg)
	req := Request{Graphs: []schema.Graph{
		schema.Path("Inception", "starred_actors", "spouse"),
		schema.Path("Inception", "starred_actors", "place_of_birth"),
		schema.Path("Christopher Nolan", "directed_by"),
	}, Strategy: schema.Breadth, Mentions: []string{"inception", "christopher nolan"}}
	a := mustTrace(t, tr, req)
	for range 3 {
		b := mustTrace(t, tr, req)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("results differ:\n%+v\n%+v", a, b)
		}
	}
	if len(a.Anchors) != 2 || len(a.Evidence) < 10 || len(a.Chains) == 0 {
		t.Fatalf("anchors %d evidence %d chains %d", len(a.Anchors), len(a.Evidence), len(a.Chains))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tr.Trace(ctx, req); err == nil {
		t.Error("cancelled context: no error")
	}
}

// nonAdditive hides EncodeParts, forcing the per-step text path.
type nonAdditive struct{ models.Encoder }

func TestNonAdditiveMatchesAdditive(t *testing.T) {
	g := demoGraph(t)
	enc := wordvec.New(nil, wordvec.Options{})
	for _, mode := range []TextMode{TextFarMention, TextKnownEnds, TextFull, TextRelation} {
		cfg := DefaultConfig()
		cfg.Text = mode
		a, err := New(g, enc, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		b, err := New(g, nonAdditive{enc}, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		req := Request{Graphs: []schema.Graph{schema.Path("Inception", "directed_by", "place_of_birth", "located_in")}, Mentions: []string{"inception"}}
		ra, rb := mustTrace(t, a, req), mustTrace(t, b, req)
		if !slices.Equal(answerNames(ra), answerNames(rb)) || len(ra.Evidence) != len(rb.Evidence) {
			t.Fatalf("%v: additive %v / %d evidence, text path %v / %d", mode, answerNames(ra), len(ra.Evidence), answerNames(rb), len(rb.Evidence))
		}
		for i := range ra.Evidence {
			if d := ra.Evidence[i].TScore - rb.Evidence[i].TScore; d > 1e-4 || d < -1e-4 {
				t.Errorf("%v: T-Score %v vs %v", mode, ra.Evidence[i].TScore, rb.Evidence[i].TScore)
			}
		}
	}
}

func TestNewRejects(t *testing.T) {
	g := demoGraph(t)
	enc := wordvec.New(nil, wordvec.Options{})
	for _, cfg := range []Config{{Workers: -1}, {TopN: -1}, {Text: 9}} {
		if _, err := New(g, enc, nil, cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
	if _, err := New(nil, enc, nil, DefaultConfig()); err == nil {
		t.Error("nil graph accepted")
	}
}

func TestEditRatio(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want float32
	}{{"", "", 1}, {"abc", "", 0}, {"kitten", "sitting", 1 - 3.0/7}, {"inception", "inception", 1}, {"ab", "ba", 0}} {
		if got := editdist.Ratio(c.a, c.b); got-c.want > 1e-6 || c.want-got > 1e-6 {
			t.Errorf("editdist.Ratio(%q,%q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// pqQuestion is one PathQuestion line: subject, relation path, gold answers.
type pqQuestion struct {
	text    string
	subject string
	rels    []string
	gold    []string
}

func parsePQ(t testing.TB, data []byte) []pqQuestion {
	t.Helper()
	var out []pqQuestion
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 {
			t.Fatalf("line %d: %d fields", n, len(f))
		}
		a := f[1]
		i := strings.IndexByte(a, '(')
		gold := strings.FieldsFunc(strings.TrimSuffix(a[i+1:], ")"), func(r rune) bool { return r == '/' })
		path := strings.Split(strings.SplitN(f[2], "#<end>#", 2)[0], "#")
		q := pqQuestion{text: f[0], subject: path[0], gold: gold}
		for j := 1; j < len(path); j += 2 {
			q.rels = append(q.rels, path[j])
		}
		out = append(out, q)
	}
	return out
}

// oracle traces every demo question with its gold relation path as the
// schema graph and returns Hits@1 (the first answer is gold) and exact-set
// accuracy (the answers are exactly the gold set).
func oracle(t *testing.T, tr *Tracer) (hit, exact float64) {
	qs := parsePQ(t, demo.Questions())
	for _, q := range qs {
		st := schema.Precision
		if len(q.gold) > 1 {
			st = schema.Breadth
		}
		res := mustTrace(t, tr, Request{Graphs: []schema.Graph{schema.Path(q.subject, q.rels...)}, Strategy: st,
			Mentions: []string{kg.EntityText(q.subject)}})
		if len(res.Answers) > 0 && slices.Contains(q.gold, res.Answers[0].Name) {
			hit++
		}
		got := answerNames(res)
		gold := slices.Clone(q.gold)
		sort.Strings(gold)
		if slices.Equal(got, gold) {
			exact++
		}
	}
	return hit / float64(len(qs)), exact / float64(len(qs))
}

// TestPlaceholderEncoding measures the three triple-text modes on the demo
// questions with oracle schema graphs. Measured (spelling-only / word vectors):
// the table is in the package doc; the default must stay the best or tied.
func TestPlaceholderEncoding(t *testing.T) {
	for _, ec := range encoders {
		t.Run(ec.name, func(t *testing.T) {
			enc := ec.get(t)
			rates := map[TextMode][2]float64{}
			for _, mode := range []TextMode{TextFarMention, TextKnownEnds, TextFull, TextRelation} {
				cfg := DefaultConfig()
				cfg.Text = mode
				hit, exact := oracle(t, newTracer(t, enc, cfg))
				rates[mode] = [2]float64{hit, exact}
				t.Logf("%-10s %-10s Hits@1 %.3f exact-set %.3f", ec.name, mode, hit, exact)
			}
			def := rates[TextFarMention]
			if def[0] < 0.9 {
				t.Errorf("far-mention Hits@1 %.3f < 0.9", def[0])
			}
			for m, r := range rates {
				if r[1] > def[1]+1e-9 {
					t.Errorf("%v exact-set %.3f beats the default %.3f", m, r[1], def[1])
				}
			}
		})
	}
}

// TestBreadthFallback measures Breadth with and without the fallback to the
// best edges when no edge reaches Theta.
func TestBreadthFallback(t *testing.T) {
	for _, ec := range encoders {
		t.Run(ec.name, func(t *testing.T) {
			enc := ec.get(t)
			cfg := DefaultConfig()
			cfg.Text = TextFull
			withHit, withExact := oracle(t, newTracer(t, enc, cfg))
			cfg.StrictTheta = true
			strictHit, strictExact := oracle(t, newTracer(t, enc, cfg))
			t.Logf("full text: fallback Hits@1 %.3f exact %.3f; strict theta Hits@1 %.3f exact %.3f", withHit, withExact, strictHit, strictExact)
			if withHit < strictHit {
				t.Errorf("fallback lowers Hits@1: %.3f < %.3f", withHit, strictHit)
			}
		})
	}
}

// TestConstraintMention shows why far mentions enter the text: the films
// Nolan directed tie on directed_by, and only "Tom Hardy" on the far end of
// the starred_actors constraint tells Inception apart.
func TestConstraintMention(t *testing.T) {
	req := Request{Graphs: []schema.Graph{{Triples: []schema.Triple{
		{Head: "[ENT1]", Rel: "directed_by", Tail: "Christopher_Nolan"},
		{Head: "[ENT1]", Rel: "starred_actors", Tail: "Tom_Hardy"},
	}, Answer: "[ENT1]"}}, Mentions: []string{"christopher nolan"}}
	for _, c := range []struct {
		mode TextMode
		want int // number of answers
	}{{TextFarMention, 1}, {TextRelation, 3}} {
		cfg := DefaultConfig()
		cfg.Text = c.mode
		res := mustTrace(t, newTracer(t, wordvec.New(nil, wordvec.Options{}), cfg), req)
		got := answerNames(res)
		if len(got) != c.want || (c.want == 1 && got[0] != "Inception") {
			t.Errorf("%v: answers %v, want %d (Inception when 1)", c.mode, got, c.want)
		}
	}
}

// plainReader hides every optional capability of the in-memory graph
// (Columnar, Texter): what a remote backend offers.
type plainReader struct{ kg.Reader }

// TestPlainBackendTracesAlike holds tracing over a backend with only the
// kg.Reader methods to the same results as over *kg.Graph, whose columns
// and texts it reads directly otherwise.
func TestPlainBackendTracesAlike(t *testing.T) {
	g := demoGraph(t)
	enc := wordvec.New(nil, wordvec.Options{})
	ents, err := kgvec.Build(context.Background(), g, enc, nil)
	if err != nil {
		t.Fatal(err)
	}
	fast, err := New(g, enc, ents, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	plain, err := New(plainReader{g}, enc, ents, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if plain.rels != nil || fast.rels == nil {
		t.Fatal("the plain backend should have no columns, the graph should")
	}
	for _, req := range []Request{
		{Graphs: []schema.Graph{schema.Path("Inception", "directed_by", "place_of_birth", "located_in")}, Mentions: []string{"inception"}},
		{Graphs: []schema.Graph{schema.Path("Inception", "starred_actors")}, Strategy: schema.Breadth, Mentions: []string{"inception"}},
		{Graphs: []schema.Graph{schema.Path("Switzerland", "language spoken")}, Strategy: schema.Breadth, Mentions: []string{"switzerland"}},
	} {
		a, b := mustTrace(t, fast, req), mustTrace(t, plain, req)
		if !slices.Equal(answerNames(a), answerNames(b)) || !slices.Equal(a.Chains, b.Chains) || len(a.Evidence) != len(b.Evidence) {
			t.Errorf("%v: graph %v / %d chains, plain backend %v / %d chains", req.Graphs[0], answerNames(a), len(a.Chains), answerNames(b), len(b.Chains))
		}
	}
}

// TestLazyPartsMatchEager holds a tracer whose entity parts are encoded as
// runs meet them (a KG too large to encode up front) to the results of one
// that encoded them all, in every text mode, constraint mentions included.
func TestLazyPartsMatchEager(t *testing.T) {
	g := demoGraph(t)
	enc := wordvec.New(nil, wordvec.Options{})
	reqs := []Request{
		{Graphs: []schema.Graph{schema.Path("Inception", "directed_by", "place_of_birth", "located_in")}, Mentions: []string{"inception"}},
		{Graphs: []schema.Graph{{Triples: []schema.Triple{
			{Head: "[ENT1]", Rel: "directed_by", Tail: "Christopher_Nolan"},
			{Head: "[ENT1]", Rel: "starred_actors", Tail: "Tom_Hardy"},
		}, Answer: "[ENT1]"}}, Mentions: []string{"christopher nolan"}},
	}
	for _, mode := range []TextMode{TextFarMention, TextKnownEnds, TextFull, TextRelation} {
		cfg := DefaultConfig()
		cfg.Text = mode
		eager, err := New(g, enc, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		lazy, err := New(g, enc, nil, cfg)
		if err != nil {
			t.Fatal(err)
		}
		lazy.entParts, lazy.lazyParts = nil, true
		for _, req := range reqs {
			ra, rb := mustTrace(t, eager, req), mustTrace(t, lazy, req)
			if !slices.Equal(answerNames(ra), answerNames(rb)) || len(ra.Evidence) != len(rb.Evidence) || len(ra.Evidence) == 0 {
				t.Fatalf("%v: eager %v / %d evidence, lazy %v / %d", mode, answerNames(ra), len(ra.Evidence), answerNames(rb), len(rb.Evidence))
			}
			for i := range ra.Evidence {
				if ra.Evidence[i].TScore != rb.Evidence[i].TScore || ra.Evidence[i].Triple != rb.Evidence[i].Triple {
					t.Errorf("%v: evidence %d: %+v vs %+v", mode, i, ra.Evidence[i], rb.Evidence[i])
				}
			}
		}
	}
}

func TestSelection(t *testing.T) {
	for _, tc := range []struct {
		cfg  func(*Config)
		want Selection
		err  string
	}{
		{func(*Config) {}, SelectByStrategy, ""},
		{func(c *Config) { c.OnlyGreedy = true }, SelectGreedy, ""},
		{func(c *Config) { c.OnlyThreshold = true }, SelectThreshold, ""},
		{func(c *Config) { c.Selection = SelectThreshold }, SelectThreshold, ""},
		{func(c *Config) { c.Selection, c.OnlyThreshold = SelectThreshold, true }, SelectThreshold, ""},
		{func(c *Config) { c.Selection, c.OnlyGreedy = SelectThreshold, true }, SelectThreshold, "--selection threshold and --only-greedy or --only-threshold exclude each other"},
		{func(c *Config) { c.OnlyGreedy, c.OnlyThreshold = true, true }, SelectGreedy, "--only-greedy and --only-threshold exclude each other"},
	} {
		c := DefaultConfig()
		tc.cfg(&c)
		if got := c.Selected(); got != tc.want {
			t.Errorf("%+v: Selected %v, want %v", c, got, tc.want)
		}
		got := ""
		if err := c.Check(); err != nil {
			got = err.Error()
		}
		if got != tc.err {
			t.Errorf("Check = %q, want %q", got, tc.err)
		}
	}
	for _, name := range []string{"strategy", "greedy", "threshold"} {
		var s Selection
		if err := s.UnmarshalText([]byte(name)); err != nil || s.String() != name {
			t.Errorf("UnmarshalText(%q) = %v, %v", name, s, err)
		}
	}
	var s Selection
	if err := s.UnmarshalText([]byte("best")); err == nil {
		t.Error("UnmarshalText(best): no error")
	}
	// The old switches and the enum trace alike.
	enc := wordvec.New(nil, wordvec.Options{})
	req := Request{Graphs: []schema.Graph{schema.Path("Inception", "directed_by")}, Mentions: []string{"inception"}}
	for _, st := range []schema.Strategy{schema.Precision, schema.Breadth} {
		req.Strategy = st
		trace := func(set func(*Config)) *Result {
			cfg := DefaultConfig()
			cfg.Theta, cfg.SoftSymbols = 0.3, true
			set(&cfg)
			r, err := newTracer(t, enc, cfg).Trace(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		for _, tc := range []struct {
			alias, enum func(*Config)
		}{
			{func(c *Config) { c.OnlyGreedy = true }, func(c *Config) { c.Selection = SelectGreedy }},
			{func(c *Config) { c.OnlyThreshold = true }, func(c *Config) { c.Selection = SelectThreshold }},
		} {
			if a, e := trace(tc.alias), trace(tc.enum); !reflect.DeepEqual(a, e) {
				t.Errorf("%v: the old switch traced\n%+v\nthe enum\n%+v", st, a, e)
			}
		}
	}
}
