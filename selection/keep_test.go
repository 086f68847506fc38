package selection

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stem-kgqa/stem/tracing"
)

// keepCase is one synthetic training set for the keep part: every
// question has one reading binding answers, the named ones (not bare
// ids) gold where named says so, and gold gold answers in all.
type keepCase struct {
	name    string
	named   bool // the named answers are the gold ones, the bare ids not
	allGold bool // every answer is gold
	want    []string
}

// keepSet builds n questions of the case over one reading's answers.
func keepSet(t *testing.T, tc keepCase, answers []tracing.Answer, n int) ([]Question, Input, Candidate) {
	t.Helper()
	in := Input{Question: "what are the names", Trace: &tracing.Result{Alternatives: []tracing.Alternative{{Answers: answers}}}}
	cands, err := Candidates(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	fs := KeepFeatures(in, cands[0], answers)
	labels := make([]bool, len(answers))
	gold := 0
	for i, a := range answers {
		labels[i] = tc.allGold || (tc.named && !bareID(a.Name))
		if labels[i] {
			gold++
		}
	}
	if !tc.named && !tc.allGold {
		// Only the first is gold: a one-answer question.
		labels = make([]bool, len(answers))
		labels[0], gold = true, 1
	}
	ents := make([]int32, len(answers))
	for i, a := range answers {
		ents[i] = a.Entity
	}
	var qs []Question
	for range n {
		qs = append(qs, Question{Rows: [][]float64{cands[0].Features}, Labels: []bool{labels[0]}, Answers: [][][]float64{fs},
			AnswerLabels: [][]bool{labels}, Keep: [][][]float64{fs}, Entities: [][]int32{ents}, Gold: gold})
	}
	return qs, in, cands[0]
}

// TestTrainKeep learns where to cut a reading's answers on sets where
// the right cut is known: the named answers are the gold ones (keep
// them, drop the bare ids), only the first is gold (keep it alone),
// every answer is (keep them all).
func TestTrainKeep(t *testing.T) {
	answers := []tracing.Answer{{Entity: 1, Name: "Alice", Score: 3}, {Entity: 2, Name: "m.0x2", Score: 3},
		{Entity: 3, Name: "Bob", Score: 3}, {Entity: 4, Name: "m.0x4", Score: 3}, {Entity: 5, Name: "Carol", Score: 3}}
	for _, tc := range []keepCase{
		{name: "named are gold", named: true, want: []string{"Alice", "Bob", "Carol"}},
		{name: "first alone", want: []string{"Alice"}},
		{name: "all gold", allGold: true, want: []string{"Alice", "m.0x2", "Bob", "m.0x4", "Carol"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			qs, in, c := keepSet(t, tc, answers, 50)
			m, err := Train(qs, TrainOptions{Steps: 800, Keep: true})
			if err != nil {
				t.Fatal(err)
			}
			if m.Keep == nil || !slices.Equal(m.Keep.Features, KeepNames) || len(m.Keep.Weights) != len(KeepNames) {
				t.Fatalf("keep part %+v", m.Keep)
			}
			if math.Abs(m.Keep.F1-1) > 1e-9 {
				t.Errorf("training F1 with the cut %.3f, want 1 (the cut is exact)", m.Keep.F1)
			}
			got, ds := m.Cut(in, []Candidate{c}, 0, answers)
			var names []string
			for _, a := range got {
				names = append(names, a.Name)
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("kept %v, want %v (decisions %+v, threshold %.2f)", names, tc.want, ds, m.Keep.Threshold)
			}
			if len(ds) != len(answers) || !ds[0].Kept {
				t.Errorf("decisions %+v, want one per answer, the first kept", ds)
			}
		})
	}
	qs, _, _ := keepSet(t, keepCase{named: true}, answers, 10)
	if m, _ := Train(qs, TrainOptions{Steps: 10}); m.Keep != nil {
		t.Errorf("keep part learnt without TrainOptions.Keep: %+v", m.Keep)
	}
}

// TestKeepPastMaxAnswers: the answers after MaxAnswers are never kept,
// whatever the threshold.
func TestKeepPastMaxAnswers(t *testing.T) {
	var answers []tracing.Answer
	for i := range MaxAnswers + 5 {
		answers = append(answers, tracing.Answer{Entity: int32(i + 1), Name: "x", Score: 3})
	}
	m := &Model{Keep: &Keep{Features: KeepNames, Weights: make([]float64, len(KeepNames)), Threshold: 0}}
	got, ds := m.Cut(Input{Question: "q"}, []Candidate{{Answers: answers}}, 0, answers)
	if len(got) != MaxAnswers || len(ds) != MaxAnswers {
		t.Errorf("kept %d answers with %d decisions, want %d", len(got), len(ds), MaxAnswers)
	}
}

// TestLoadWithoutKeep: a selector file written before the keep part
// loads, has none, and returns every answer; one with a keep part over
// other features is refused; one with it loads it back.
func TestLoadWithoutKeep(t *testing.T) {
	dir := t.TempDir()
	old := map[string]any{"features": Names, "weights": make([]float64, len(Names)), "bias": 0.5, "select": true,
		"choice": make([]float64, len(Names)), "platt": map[string]float64{"a": 1, "b": 0}, "trained": 10, "held": 2}
	answers := []tracing.Answer{{Entity: 1, Name: "a"}, {Entity: 2, Name: "b"}, {Entity: 3, Name: "c"}}
	for _, tc := range []struct {
		name   string
		keep   any
		err    bool
		answer int
	}{
		{name: "old file", answer: 3},
		{name: "keep over other features", keep: map[string]any{"features": []string{"x"}, "weights": []float64{1}}, err: true},
		{name: "keep", keep: Keep{Features: KeepNames, Weights: make([]float64, len(KeepNames)), Bias: -5, Threshold: 0.5}, answer: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := map[string]any{}
			for k, v := range old {
				file[k] = v
			}
			if tc.keep != nil {
				file["keep"] = tc.keep
			}
			b, err := json.Marshal(file)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, tc.name+".json")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			m, err := Load(path)
			if tc.err {
				if err == nil {
					t.Fatalf("loaded %+v, want it refused", m.Keep)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Bias != 0.5 || !m.Select || m.Platt == nil || m.Trained != 10 {
				t.Errorf("loaded %+v, want the file's fields", m)
			}
			got, _ := m.Cut(Input{Question: "q"}, []Candidate{{Answers: answers}}, 0, answers)
			if len(got) != tc.answer {
				t.Errorf("kept %d answers, want %d", len(got), tc.answer)
			}
		})
	}
}

// TestKeepOtherReadings learns to add another reading's answers: the
// chosen reading binds one gold answer, the other reading the rest of
// the gold ones (named) and wrong ones (bare ids), and one answer of the
// chosen reading again, weighed once.
func TestKeepOtherReadings(t *testing.T) {
	chosenAs := []tracing.Answer{{Entity: 1, Name: "Alice", Score: 3}}
	otherAs := []tracing.Answer{{Entity: 2, Name: "m.0x2", Score: 3}, {Entity: 1, Name: "Alice", Score: 3},
		{Entity: 3, Name: "Bob", Score: 3}, {Entity: 4, Name: "m.0x4", Score: 3}}
	in := Input{Question: "what are the names", Trace: &tracing.Result{Alternatives: []tracing.Alternative{{Answers: chosenAs}, {Group: 1, Answers: otherAs}}}}
	cands, err := Candidates(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	var q Question
	for _, c := range cands {
		fs := KeepFeatures(in, c, c.Answers)
		labels := make([]bool, len(c.Answers))
		ents := make([]int32, len(c.Answers))
		for i, a := range c.Answers {
			labels[i], ents[i] = !bareID(a.Name), a.Entity
		}
		q.Rows, q.Labels = append(q.Rows, c.Features), append(q.Labels, labels[0])
		q.Answers, q.AnswerLabels = append(q.Answers, fs), append(q.AnswerLabels, labels)
		q.Keep, q.Entities = append(q.Keep, fs), append(q.Entities, ents)
	}
	q.Gold = 2
	qs := slices.Repeat([]Question{q}, 50)
	m, err := Train(qs, TrainOptions{Steps: 800, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	k := chosen(m.Choice, q.Rows)
	got, ds := m.Cut(in, cands, k, cands[k].Answers)
	var names []string
	for _, a := range got {
		names = append(names, a.Name)
	}
	if want := []string{"Alice", "Bob"}; !slices.Equal(names, want) || len(ds) != 4 || math.Abs(m.Keep.F1-1) > 1e-9 {
		t.Errorf("chose reading %d, kept %v (decisions %+v, training F1 %.3f), want %v from 4 answers weighed", k, names, ds, m.Keep.F1, want)
	}
}

// TestPoolLimit: the keep pool weighs the chosen reading's answers, then
// the next readings' by choice score, an entity once; a limit above 0
// weighs that many readings in all, 0 every reading (a keep part
// written before Keep.Readings).
func TestPoolLimit(t *testing.T) {
	row := func() [][]float64 { return [][]float64{make([]float64, len(KeepNames))} }
	rs := []poolReading{
		{rows: row(), ents: []int32{10}, choice: 1},
		{rows: row(), ents: []int32{20}, choice: 3}, // chosen
		{rows: row(), ents: []int32{30}, choice: 2},
		{rows: row(), ents: []int32{20}, choice: 2.5}, // the chosen one's answer again
		{rows: row(), ents: []int32{40}, choice: 0},
	}
	for _, tc := range []struct {
		limit int
		want  [][2]int
	}{
		{0, [][2]int{{1, 0}, {2, 0}, {0, 0}, {4, 0}}},
		{1, [][2]int{{1, 0}}},
		{3, [][2]int{{1, 0}, {2, 0}}}, // reading 3, second by choice, adds nothing new
		{4, [][2]int{{1, 0}, {2, 0}, {0, 0}}},
		{9, [][2]int{{1, 0}, {2, 0}, {0, 0}, {4, 0}}},
	} {
		rows, from := pool(rs, 1, tc.limit)
		if !slices.Equal(from, tc.want) || len(rows) != len(tc.want) {
			t.Errorf("limit %d: weighed %v, want %v", tc.limit, from, tc.want)
			continue
		}
		for i, f := range from {
			other := rows[i][len(KeepNames)-2]
			if (f[0] != 1) != (other == 1) {
				t.Errorf("limit %d: row %d (reading %d) other=%v", tc.limit, i, f[0], other)
			}
		}
	}
}
