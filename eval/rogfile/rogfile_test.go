package rogfile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/eval"
	"github.com/stem-kgqa/stem/internal/shareddata"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/schema"
)

// The first row of GNN-RAG's released WebQSP predictions
// (gnnrag_sbert_test.jsonl, WebQTest-0): the layout Prompt must write.
const gnnragInput = "[INST] <<SYS>>\n<</SYS>>\nBased on the reasoning paths, please answer the given question. Please keep the answer as simple as possible and return all the possible answers as a list.\n\nReasoning Paths:\nJamaica -> language.human_language.countries_spoken_in -> Jamaican English\nJamaica -> location.country.languages_spoken -> Jamaican Creole English Language\n\nQuestion:\nwhat does jamaican people speak? [/INST]"

func TestPromptLayout(t *testing.T) {
	paths := []Path{
		{{From: "Jamaica", Relation: "language.human_language.countries_spoken_in", To: "Jamaican English"}},
		{{From: "Jamaica", Relation: "location.country.languages_spoken", To: "Jamaican Creole English Language", Forward: true}},
	}
	if got := Prompt("what does jamaican people speak", paths, Llama2); got != gnnragInput {
		t.Errorf("llama2 prompt:\n%q\nwant\n%q", got, gnnragInput)
	}
	plain := Prompt("what does jamaican people speak?", paths, Plain)
	if want := strings.TrimSuffix(strings.TrimPrefix(gnnragInput, llama2Open), llama2Close); plain != want {
		t.Errorf("plain prompt:\n%q\nwant\n%q", plain, want)
	}
	if ChatPrompt(gnnragInput) != plain || ChatPrompt(plain) != plain {
		t.Error("ChatPrompt does not take the llama2 wrapper off, or changes a plain prompt")
	}
	// No path: the empty block RoG writes (GNN-RAG's WebQTest-19).
	if got, want := Prompt("what is my timezone in louisiana", nil, Llama2), "Reasoning Paths:\n\n\nQuestion:\nwhat is my timezone in louisiana? [/INST]"; !strings.HasSuffix(got, want) {
		t.Errorf("prompt with no path ends %q, want %q", got[len(got)-len(want):], want)
	}
}

// TestPromptReproducesGNNRAG rebuilds the prompt of every row of
// GNN-RAG's released predictions from its question and reasoning paths,
// and must write the row's input byte for byte.
func TestPromptReproducesGNNRAG(t *testing.T) {
	path := shareddata.Path(t, "webqsp/gnnrag_sbert_test.jsonl")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, same := 0, 0
	var first string
	err = ReadRows(context.Background(), f, filepath.Base(path), func(r Row) error {
		n++
		lines, err := benchmark.ReasoningPaths(r.Input)
		if err != nil {
			return err
		}
		paths := make([]Path, len(lines))
		for i, l := range lines {
			for _, tr := range l {
				paths[i] = append(paths[i], Step{From: tr[0], Relation: tr[1], To: tr[2], Forward: true})
			}
		}
		if Prompt(r.Question, paths, Llama2) == r.Input {
			same++
		} else if first == "" {
			first = r.ID
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Seven rows cannot come back exact: benchmark.ReasoningPaths trims
	// the stray spaces three entity names carry in the released file and
	// skips the empty path lines four prompts hold.
	if n != 1628 || same != n-7 {
		t.Errorf("%d of %d prompts rebuilt exactly (first miss %s), want all but 7", same, n, first)
	}
	t.Logf("%d of %d GNN-RAG prompts rebuilt byte for byte", same, n)
}

func TestParseChain(t *testing.T) {
	ev := func(ts ...[3]string) map[[3]string]bool {
		m := map[[3]string]bool{}
		for _, t := range ts {
			m[t] = true
		}
		return m
	}
	tests := []struct {
		name     string
		chain    string
		evidence map[[3]string]bool
		want     Path
		wantText string
	}{
		{"forward", "Inception -> directed_by -> Christopher_Nolan", nil,
			Path{{"Inception", "directed_by", "Christopher_Nolan", true}}, "Inception -> directed_by -> Christopher_Nolan"},
		{"against the triple, written as RoG walks it", "Christopher_Nolan <- directed_by <- Inception -> starred_actors -> Tom_Hardy",
			ev([3]string{"Inception", "directed_by", "Christopher_Nolan"}, [3]string{"Inception", "starred_actors", "Tom_Hardy"}),
			Path{{"Christopher_Nolan", "directed_by", "Inception", false}, {"Inception", "starred_actors", "Tom_Hardy", true}},
			"Christopher_Nolan -> directed_by -> Inception -> starred_actors -> Tom_Hardy"},
		{"a name holding an arrow, told apart by the evidence", "A -> B -> r -> C -> s -> D",
			ev([3]string{"A -> B", "r", "C"}, [3]string{"C", "s", "D"}),
			Path{{"A -> B", "r", "C", true}, {"C", "s", "D", true}}, "A -> B -> r -> C -> s -> D"},
		{"the same without evidence takes the shortest names", "A -> B -> r -> C", nil,
			Path{{"A", "B", "r -> C", true}}, "A -> B -> r -> C"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseChain(tc.chain, tc.evidence)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("ParseChain = %+v, want %+v", got, tc.want)
			}
			if got.Text() != tc.wantText {
				t.Errorf("Text = %q, want %q", got.Text(), tc.wantText)
			}
		})
	}
	for _, bad := range []string{"", "Inception", "Inception -> directed_by", "A -> r <- B", "A ->  -> B"} {
		if p, err := ParseChain(bad, nil); !errors.Is(err, errNoParse) {
			t.Errorf("ParseChain(%q) = %v, %v; want errNoParse", bad, p, err)
		}
	}
	if _, err := ParseChain("A -> r -> B", ev([3]string{"B", "r", "A"})); err == nil {
		t.Error("a chain whose step is not in the evidence in its direction was read")
	}
}

// FuzzParseChain: whatever the chain, ParseChain does not panic, and a
// path it reads, written back with each step's own arrow, is the chain.
func FuzzParseChain(f *testing.F) {
	for _, s := range []string{"A -> r -> B", "A <- r <- B -> s -> C", "A -> <- B", " -> -> ", "a -> b -> c -> d -> e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, chain string) {
		p, err := ParseChain(chain, nil)
		if err != nil {
			return
		}
		var b strings.Builder
		b.WriteString(p[0].From)
		for i, s := range p {
			if i > 0 && s.From != p[i-1].To {
				t.Fatalf("step %d starts at %q, the step before ended at %q", i, s.From, p[i-1].To)
			}
			arrow := arrowForward
			if !s.Forward {
				arrow = arrowBackward
			}
			b.WriteString(arrow + s.Relation + arrow + s.To)
		}
		if b.String() != chain {
			t.Errorf("ParseChain(%q) writes back as %q", chain, b.String())
		}
	})
}

func TestScoreFile(t *testing.T) {
	in := strings.Join([]string{
		// NOTES' worked check: matched 2, P 2/3, R 1, F1 0.8.
		`{"id": "a", "prediction": "Playwright\nPoet\nActor", "ground_truth": ["playwright", "poet"]}`,
		// A list with repeats: folded to [Lyon, Paris], Lyon first.
		`{"id": "b", "prediction": ["Paris", "Lyon", "Lyon"], "ground_truth": ["lyon"]}`,
		`{"id": "c", "prediction": "", "ground_truth": ["x"]}`,
		`{"id": "d", "prediction": "x", "ground_truth": []}`,
		``,
	}, "\n")
	got, err := Score(context.Background(), strings.NewReader(in), "p.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := FileScores{Scores: eval.Scores{N: 3, Hit: 200.0 / 3, Hits1: 200.0 / 3, Precision: (2.0/3 + 0.5) * 100 / 3, Recall: 200.0 / 3, F1: (0.8 + 2.0/3) * 100 / 3}, NoGold: 1}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if got.N != want.N || got.NoGold != want.NoGold || !near(got.Hit, want.Hit) || !near(got.Hits1, want.Hits1) || !near(got.Precision, want.Precision) || !near(got.Recall, want.Recall) || !near(got.F1, want.F1) {
		t.Errorf("Score = %+v, want %+v", got, want)
	}
	for _, bad := range []struct{ in, want string }{
		{`{"id": "a", "ground_truth": ["x"]}`, "no \"prediction\""},
		{`{"id": "a", "prediction": 3, "ground_truth": ["x"]}`, "p.jsonl:1"},
		{`{"question": "q"}`, "no \"id\""},
		{`not json`, "p.jsonl:1"},
	} {
		if _, err := Score(context.Background(), strings.NewReader(bad.in), "p.jsonl"); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Score(%s) error = %v, want one containing %q", bad.in, err, bad.want)
		}
	}
}

// demoRun answers the demo questions, with two gold answer sets changed so
// that some answers miss, over the oracle planner with Breadth forced (so
// some answers are extra), exporting rows of format f to a file; it
// returns the report and the file.
func demoRun(t *testing.T, f Format) (*eval.Report, string) {
	t.Helper()
	ctx := context.Background()
	g, err := kg.ReadTSV(demo.KG(), demo.KGName)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := benchmark.ReadPathQuestion(ctx, bytes.NewReader(demo.Questions()), demo.QuestionsName)
	if err != nil {
		t.Fatal(err)
	}
	qs[0].Answers = []string{"Tom_Hardy"}
	qs[1].Answers = append(qs[1].Answers, "Emma_Thomas")
	s := plan.DefaultSettings()
	s.Planner = "oracle"
	p, _, err := plan.Open(ctx, s, plan.Assets{Graph: kg.Of(g), Encoder: wordvec.New(nil, wordvec.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	breadth := schema.Breadth
	p.Strategy = &breadth
	out := filepath.Join(t.TempDir(), "predictions.jsonl")
	file, err := Create(out, false)
	if err != nil {
		t.Fatal(err)
	}
	ex := &Exporter{File: file, Format: f, Template: Llama2}
	rep, err := eval.Run(ctx, qs, eval.Pipeline{Pipeline: p}, eval.Options{Graph: g, Workers: 2, OnAnswer: ex.OnAnswer})
	if err != nil {
		t.Fatal(err)
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
	if ex.Unparsed != 0 || file.Rows() != rep.N {
		t.Errorf("%d chains unparsed, %d rows for %d questions", ex.Unparsed, file.Rows(), rep.N)
	}
	return rep, out
}

// TestPredictionsScoreAsReport: stem's own metrics over the
// predictions.jsonl a run wrote equal the run's report, figure for
// figure, so RoG's evaluate_results.py (the same rules) scores stem's
// answers as stem does.
func TestPredictionsScoreAsReport(t *testing.T) {
	rep, out := demoRun(t, FormatPredictions)
	if rep.Hit == 100 || rep.Precision == 100 {
		t.Fatalf("the run should miss some answers and add some: hit %.2f precision %.2f", rep.Hit, rep.Precision)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := Score(context.Background(), f, "predictions.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"hit", got.Hit, rep.Hit}, {"hits@1", got.Hits1, rep.Hits1}, {"f1", got.F1, rep.F1}, {"precision", got.Precision, rep.Precision}, {"recall", got.Recall, rep.Recall}} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s over the file %.6f, report %.6f", c.name, c.got, c.want)
		}
	}
	if got.N != rep.N {
		t.Errorf("%d rows scored, report over %d", got.N, rep.N)
	}
	// Every row is RoG's: its keys in RoG's order, its input a prompt whose
	// paths benchmark's GNN-RAG reader reads back.
	b, _ := os.ReadFile(out)
	first, _, _ := strings.Cut(string(b), "\n")
	if !strings.HasPrefix(first, `{"id":"`) || !strings.Contains(first, `","question":"`) || !strings.Contains(first, `,"prediction":"`) || !strings.Contains(first, `,"ground_truth":[`) || !strings.Contains(first, `,"input":"[INST] <<SYS>>`) {
		t.Errorf("first row is not RoG's layout: %s", first)
	}
	err = benchmark.ReadGNNRAG(context.Background(), bytes.NewReader(b), "predictions.jsonl", func(r benchmark.GNNRAGRow) error {
		if len(r.Paths) == 0 {
			t.Errorf("row %s: no reasoning path in its prompt", r.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPathsExport: the retrieval-only export holds each question's
// evidence as KG triples (every one a triple of the demo KG, in its
// direction) and as the prompt's path lines, one per chain.
func TestPathsExport(t *testing.T) {
	_, out := demoRun(t, FormatPaths)
	g, err := kg.ReadTSV(demo.KG(), demo.KGName)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r PathsRow
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		rows++
		if len(r.Paths) == 0 || len(r.QEntity) == 0 || len(r.GroundTruth) == 0 {
			t.Errorf("row %s: %d paths, q_entity %v, ground_truth %v", r.ID, len(r.Paths), r.QEntity, r.GroundTruth)
		}
		lines, err := benchmark.ReasoningPaths(r.Input)
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) != len(r.Paths) {
			t.Errorf("row %s: %d prompt lines for %d paths", r.ID, len(lines), len(r.Paths))
		}
		for _, p := range r.Paths {
			for _, tr := range p {
				h, ok1 := g.Entity(tr[0])
				tl, ok2 := g.Entity(tr[2])
				rel, ok3 := g.Relation(tr[1])
				if !ok1 || !ok2 || !ok3 || !g.HasTriple(h, rel, tl) {
					t.Errorf("row %s: %v is not a triple of the KG", r.ID, tr)
				}
			}
		}
	}
	if rows == 0 {
		t.Fatal("no row")
	}
}

func TestCreateRefusesRows(t *testing.T) {
	p := filepath.Join(t.TempDir(), "p.jsonl")
	if err := os.WriteFile(p, []byte("{\"id\": \"a\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(p, false); err == nil || !strings.Contains(err.Error(), "already holds rows") {
		t.Errorf("Create over rows: %v", err)
	}
	f, err := Create(p, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Write(Prediction{ID: "b"}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if b, _ := os.ReadFile(p); strings.Count(string(b), "\n") != 2 {
		t.Errorf("appending did not keep the row there:\n%s", b)
	}
}

func TestLines(t *testing.T) {
	if got, want := Lines([]string{"A", "B\nC", ""}), "A\nB C\n"; got != want {
		t.Errorf("Lines = %q, want %q", got, want)
	}
	// The joined answers split back into as many predictions as answers.
	if n := len(eval.SplitLines(Lines([]string{"a\nb", "c"}))); n != 2 {
		t.Errorf("%d predictions from two answers", n)
	}
}
