package chains

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/internal/shareddata"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/train/dataset"
)

func TestExtract(t *testing.T) {
	g := graph(t, "anna children rudolf", "rudolf parents enno", "anna gender female", "enno gender female", "y r z")
	pq := func(text string, answers []string, path ...string) benchmark.Question {
		gp := schema.GoldPath{Start: path[0]}
		for i := 1; i+1 < len(path); i += 2 {
			gp.Steps = append(gp.Steps, schema.Step{Rel: path[i], Dir: schema.Forward})
			gp.Entities = append(gp.Entities, path[i+1])
		}
		return benchmark.Question{ID: "pq.txt:1", Text: text, Answers: answers, Entities: []string{path[0]}, Gold: []schema.GoldPath{gp}, Hops: len(gp.Steps)}
	}
	tests := []struct {
		name    string
		opt     Options
		q       benchmark.Question
		dropped string
		masked  [][3]string
		slot    string
		strat   string
		out     Outcome
	}{
		{
			name: "gold path", q: pq("the parent of anna's son?", []string{"enno"}, "anna", "children", "rudolf", "parents", "enno"),
			// Two chains reach enno (children-parents, and gender back
			// through female); the schema keeps the gold pattern only.
			masked: [][3]string{{"anna", "children", "[ENT1]"}, {"[ENT1]", "parents", "[ENT2]"}},
			slot:   "[ENT2]", strat: dataset.Precision,
			out: Outcome{Answers: 1, Chains: 2, Found: 2, HasGold: true, GoldFound: true},
		},
		{
			name: "shortcut misses the gold path", q: pq("the gender of anna's son's parent?", []string{"female"}, "anna", "children", "rudolf", "parents", "enno", "gender", "female"),
			masked: [][3]string{{"anna", "gender", "[ENT1]"}}, slot: "[ENT1]", strat: dataset.Precision,
			out: Outcome{Answers: 1, Chains: 1, Found: 1, HasGold: true},
		},
		{
			name: "question hops find it", opt: Options{QuestionHops: true},
			q:      pq("the gender of anna's son's parent?", []string{"female"}, "anna", "children", "rudolf", "parents", "enno", "gender", "female"),
			masked: [][3]string{{"anna", "children", "[ENT1]"}, {"[ENT1]", "parents", "[ENT2]"}, {"[ENT2]", "gender", "[ENT3]"}}, slot: "[ENT3]", strat: dataset.Precision,
			out: Outcome{Answers: 1, Chains: 1, Found: 1, HasGold: true, GoldFound: true},
		},
		{
			name: "several answers are Breadth", q: benchmark.Question{ID: "q:2", Text: "?", Entities: []string{"rudolf"}, Answers: []string{"anna", "enno", "enno"}},
			// anna -children-> rudolf and rudolf -parents-> enno are two
			// patterns to the same answer variable.
			masked: [][3]string{{"[ENT1]", "children", "rudolf"}, {"rudolf", "parents", "[ENT1]"}}, slot: "[ENT1]", strat: dataset.Breadth,
			out: Outcome{Answers: 2, Chains: 2, Found: 2},
		},
		{
			name: "no question entity", q: benchmark.Question{ID: "q:3", Text: "?", Entities: []string{"nobody"}, Answers: []string{"enno"}},
			dropped: DropNoEntity, strat: dataset.Precision, out: Outcome{NoEntity: true, Answers: 1, Unreachable: 1},
		},
		{
			name: "no answer in the KG", q: benchmark.Question{ID: "q:4", Text: "?", Entities: []string{"anna"}, Answers: []string{"x1", "x2"}},
			dropped: DropNoAnswer, strat: dataset.Breadth, out: Outcome{Answers: 2, Unreachable: 2, NotInKG: 2},
		},
		{
			name: "unreachable", q: benchmark.Question{ID: "q:5", Text: "?", Entities: []string{"anna"}, Answers: []string{"z"}},
			dropped: "no answer within 3 hops", strat: dataset.Precision, out: Outcome{Answers: 1, Unreachable: 1},
		},
		{
			name: "answer is the question entity", q: benchmark.Question{ID: "q:6", Text: "?", Entities: []string{"anna"}, Answers: []string{"anna"}},
			dropped: "no answer within 3 hops", strat: dataset.Precision, out: Outcome{Answers: 1, Unreachable: 1, AnswerIsEntity: true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := NewExtractor(g, tc.opt)
			it, o := x.Extract(tc.q)
			if it.ID != tc.q.ID || it.Source != "chains:"+tc.q.ID || it.Question != tc.q.Text || it.Strategy != tc.strat {
				t.Errorf("item %+v", it)
			}
			if it.Dropped != tc.dropped || !slices.Equal(it.Masked, tc.masked) || it.AnswerSlot != tc.slot {
				t.Errorf("dropped %q masked %q slot %q, want %q %q %q", it.Dropped, it.Masked, it.AnswerSlot, tc.dropped, tc.masked, tc.slot)
			}
			if o != tc.out {
				t.Errorf("outcome %+v, want %+v", o, tc.out)
			}
			if err := it.Check(); err != nil {
				t.Errorf("item does not check: %v", err)
			}
			if it.Usable() != (tc.dropped == "") {
				t.Errorf("usable = %v", it.Usable())
			}
		})
	}
}

func TestSummary(t *testing.T) {
	g := graph(t, "anna children rudolf", "rudolf parents enno", "y r z")
	x := NewExtractor(g, Options{MaxHops: 2})
	s := NewSummary(x.Options())
	for _, q := range []benchmark.Question{
		{ID: "1", Entities: []string{"anna"}, Answers: []string{"enno"}, Gold: []schema.GoldPath{{Start: "anna", Steps: []schema.Step{{Rel: "children"}, {Rel: "parents"}}}}},
		{ID: "2", Entities: []string{"anna"}, Answers: []string{"rudolf", "z"}},
		{ID: "3", Entities: []string{"nobody"}, Answers: []string{"enno"}},
		{ID: "4", Entities: []string{"anna"}, Answers: []string{"z"}, Gold: []schema.GoldPath{{Steps: []schema.Step{{Rel: "r"}}}}},
	} {
		it, o := x.Extract(q)
		s.Add(&it, o)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"n": 4.0, "with_chain": 2.0, "gold_path_share": 25.0, "gold_path": 1.0, "with_gold": 2.0,
		"unreachable": 1.0, "partial": 1.0, "unreachable_answers": 3.0, "answers_not_in_kg": 0.0, "no_entity": 1.0,
		"capped": 0.0, "chains": 2.0, "max_hops": 2.0, "max_paths": 64.0,
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	if s.Hops["2"] != 1 || s.Hops["1"] != 1 || s.Strategies[dataset.Breadth] != 1 || s.Strategies[dataset.Precision] != 1 {
		t.Errorf("hops %v strategies %v", s.Hops, s.Strategies)
	}
}

// TestPathQuestionGoldShare is the measurement on the PathQuestion
// train splits: with the question's hop count, the chains contain the gold
// path of every question.
func TestPathQuestionGoldShare(t *testing.T) {
	for _, tc := range []struct {
		split, kb string
		min       float64
	}{
		{"PQ-2H", "2H-kb.txt", 99},
		{"PQ-3H", "3H-kb.txt", 99},
		{"PQL-2H", "PQL2-KB.txt", 99},
	} {
		t.Run(tc.split, func(t *testing.T) {
			ctx := context.Background()
			qs, err := benchmark.LoadPathQuestion(ctx, shareddata.Path(t, filepath.Join("pathquestion/splits", tc.split+".train.txt")))
			if err != nil {
				t.Fatal(err)
			}
			g, err := kg.Load(ctx, shareddata.Path(t, filepath.Join("pathquestion", tc.kb)), kg.FormatAuto)
			if err != nil {
				t.Fatal(err)
			}
			x := NewExtractor(g, Options{QuestionHops: true})
			s := NewSummary(x.Options())
			for _, q := range qs {
				it, o := x.Extract(q)
				if err := it.Check(); err != nil {
					t.Fatal(err)
				}
				s.Add(&it, o)
			}
			if s.GoldPathShare < tc.min || s.WithChain != s.N {
				t.Errorf("%s: gold path share %.2f%% (%d of %d), %d with a chain", tc.split, s.GoldPathShare, s.GoldPath, s.N, s.WithChain)
			}
		})
	}
}
