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
	g, err := kg.ReadTSV(strings.NewReader(reuseKB), "reuse.tsv")
	if err != nil {
		t.Fatal(err)
	}
	enc := wordvec.New(nil, wordvec.Options{})
	ents, err := kgvec.Build(context.Background(), g, enc, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Reuse = reuse
	tr, err := New(g, enc, ents, cfg)
	if err != nil {
		t.Fatal(err)
	}
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
		cfg := DefaultConfig()
		cfg.Tau, cfg.GateTripleBias = 1, tc.gate
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
