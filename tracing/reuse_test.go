package tracing

import (
	"context"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/schema"
)

// Shapes taken from PathQuestion's KBs: a couple stored in both directions
// (PQ-3H asks for the spouse of the spouse of the spouse), a namesake
// self-loop (PQL-2H), and a family where the last parents hop has a
// reversed alternative.
const reuseKB = "carlos\tspouse\tlilli\n" +
	"lilli\tspouse\tcarlos\n" +
	"lilli\tspouse\trex\n" +
	"carlos\tgender\tmale\n" +
	"Indiana\trecording\tIndiana\n" +
	"Trenton\tcontainedby\tIndiana\n" +
	"henry\tparents\tmary\n" +
	"mary\tparents\tfrancis\n" +
	"mary\tparents\tadelaide\n" +
	"francis\tparents\tclaudine\n" +
	"alexander\tparents\tadelaide\n"

func reuseTracer(t *testing.T, reuse EdgeReuse) *Tracer {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Reuse = reuse
	_, tr := tsvTracer(t, reuseKB, cfg)
	return tr
}

func TestEdgeReuseAndDirection(t *testing.T) {
	tests := []struct {
		name  string
		reuse EdgeReuse
		graph schema.Graph
		want  string // answers in rank order, Precision
	}{
		{"back and forth, not-back", ReuseNotBack, schema.Path("carlos", "spouse", "spouse", "spouse"), "lilli"},
		{"back and forth, never", ReuseNever, schema.Path("carlos", "spouse", "spouse", "spouse"), "male"},
		{"self-loop twice, not-back", ReuseNotBack, schema.Path("Indiana", "recording", "recording"), "Indiana"},
		{"self-loop twice, never", ReuseNever, schema.Path("Indiana", "recording", "recording"), "Indiana"},
		// claudine is reached along the schema's direction all the way;
		// alexander needs the last parents edge walked backwards.
		{"aligned answer ranks first", ReuseNotBack, schema.Path("henry", "parents", "parents", "parents"), "claudine"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := reuseTracer(t, tc.reuse)
			res := mustTrace(t, tr, Request{Graphs: []schema.Graph{tc.graph}, Strategy: schema.Precision, Mentions: tc.graph.Mentions()})
			var got []string
			for _, a := range res.Answers {
				got = append(got, a.Name)
			}
			if strings.Join(got, ",") != tc.want {
				t.Errorf("answers = %v, want %s (problems %v)", got, tc.want, res.Problems)
			}
		})
	}
}

func TestReversedCountsInBreadth(t *testing.T) {
	tr := reuseTracer(t, ReuseNotBack)
	g := schema.Path("henry", "parents", "parents", "parents")
	res := mustTrace(t, tr, Request{Graphs: []schema.Graph{g}, Strategy: schema.Breadth, Mentions: g.Mentions()})
	if len(res.Answers) != 2 || res.Answers[0].Name != "claudine" || res.Answers[0].Reversed != 0 ||
		res.Answers[1].Name != "alexander" || res.Answers[1].Reversed != 1 {
		t.Errorf("answers = %+v, want claudine (0 reversed) then alexander (1 reversed)", res.Answers)
	}
}

func TestGateTripleBias(t *testing.T) {
	g, err := kg.ReadTSV(strings.NewReader(reuseKB), "reuse.tsv")
	if err != nil {
		t.Fatal(err)
	}
	// The guidance graph holds carlos's gender edge, not the spouse edge the
	// schema asks for.
	gender, _ := g.Relation("gender")
	carlos, _ := g.Entity("carlos")
	guide := &Guidance{Entities: map[int32]bool{}, Triples: map[int32]bool{}}
	for _, tid := range g.Out(carlos) {
		if g.Triple(tid).Rel == gender {
			guide.Triples[tid] = true
		}
	}
	enc := wordvec.New(nil, wordvec.Options{})
	ents, err := kgvec.Build(context.Background(), g, enc, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		gate bool
		want string
	}{
		{false, "male"}, // eq. 12: cosine + tau lets the guided edge of another relation win
		{true, "lilli"}, // gated: the bias only reorders edges that already match
	}
	for _, tc := range tests {
		// The gate matters where similarity decides: an LLM's relation
		// the KG does not name, here SoftSymbols.
		cfg := DefaultConfig()
		cfg.Tau, cfg.GateTripleBias, cfg.SoftSymbols = 1, tc.gate, true
		tr, err := New(g, enc, ents, cfg)
		if err != nil {
			t.Fatal(err)
		}
		sg := schema.Path("carlos", "spouse")
		res := mustTrace(t, tr, Request{Graphs: []schema.Graph{sg}, Strategy: schema.Precision, Mentions: sg.Mentions(), Guidance: guide})
		if len(res.Answers) != 1 || res.Answers[0].Name != tc.want {
			t.Errorf("gate %v: answers %+v, want %s", tc.gate, res.Answers, tc.want)
		}
	}
}

// TestGuidanceScores orders answers and biases edges by the guidance
// model's entity scores (--gnn-answers, --gnn-bias score).
func TestGuidanceScores(t *testing.T) {
	g, _ := tsvTracer(t, reuseKB, DefaultConfig())
	id := func(name string) int32 {
		e, ok := g.Entity(name)
		if !ok {
			t.Fatalf("no entity %s", name)
		}
		return e
	}
	// mary's two parents tie on S and are ordered by name; henry's
	// great-grandparents differ only in reversed edges (claudine 0,
	// alexander 1).
	scores := map[int32]float32{id("francis"): 0.9, id("adelaide"): 0.1, id("alexander"): 0.8, id("claudine"): 0.2}
	tests := []struct {
		name  string
		rank  AnswerRank
		bias  TripleBias
		strat schema.Strategy
		graph schema.Graph
		want  string // answers in rank order
	}{
		{"ties of S by name without scores", RankTrace, BiasSet, schema.Breadth, schema.Path("mary", "parents"), "adelaide,francis"},
		{"ties of S by score", RankTies, BiasSet, schema.Breadth, schema.Path("mary", "parents"), "francis,adelaide"},
		{"ties keep fewer reversed first", RankTies, BiasSet, schema.Breadth, schema.Path("henry", "parents", "parents", "parents"), "claudine,alexander"},
		{"first orders by score", RankFirst, BiasSet, schema.Breadth, schema.Path("henry", "parents", "parents", "parents"), "alexander,claudine"},
		{"precision keeps the tie without a score bias", RankTrace, BiasSet, schema.Precision, schema.Path("mary", "parents"), "adelaide,francis"},
		{"score bias breaks the tie", RankTrace, BiasScore, schema.Precision, schema.Path("mary", "parents"), "francis"},
		{"adaptive leaves edges the text matches alone", RankTrace, BiasAdaptive, schema.Precision, schema.Path("mary", "parents"), "adelaide,francis"},
		{"adaptive decides where the text matches nothing", RankTrace, BiasAdaptive, schema.Precision, schema.Path("mary", "r5d1f0a2c"), "francis"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.AnswerRank, cfg.TripleBias = tc.rank, tc.bias
			_, tr := tsvTracer(t, reuseKB, cfg)
			guide := &Guidance{Entities: map[int32]bool{}, Triples: map[int32]bool{}, Scores: scores}
			res := mustTrace(t, tr, Request{Graphs: []schema.Graph{tc.graph}, Strategy: tc.strat, Mentions: tc.graph.Mentions(), Guidance: guide})
			if got := rankedNames(res); got != tc.want {
				t.Errorf("answers = %v, want %s", got, tc.want)
			}
		})
	}
	for _, s := range []string{"off", "ties", "first"} {
		var r AnswerRank
		if err := r.UnmarshalText([]byte(s)); err != nil || r.String() != s {
			t.Errorf("AnswerRank %q: %v, %v", s, r, err)
		}
	}
	for _, s := range []string{"set", "score", "adaptive"} {
		var b TripleBias
		if err := b.UnmarshalText([]byte(s)); err != nil || b.String() != s {
			t.Errorf("TripleBias %q: %v, %v", s, b, err)
		}
	}
	var r AnswerRank
	if err := r.UnmarshalText([]byte("best")); err == nil {
		t.Error("--gnn-answers best accepted")
	}
}
