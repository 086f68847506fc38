package selection

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
)

func TestLexFit(t *testing.T) {
	q := words("in which country was the founder of globex born ?")
	for _, tc := range []struct {
		rels []string
		want float64
	}{
		{[]string{"founded_by", "born_in", "country"}, 1},
		{[]string{"works_for", "born_in", "country"}, 2.0 / 3},
		{[]string{"people.person.place_of_birth"}, 0},
		{[]string{"location.country.capital"}, 1},
	} {
		if got := lexFit(q, schema.Path("globex", tc.rels...)); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%v: lex_fit %v, want %v", tc.rels, got, tc.want)
		}
	}
}

func TestAgreementAndChoose(t *testing.T) {
	a := func(es ...int32) []tracing.Answer {
		var out []tracing.Answer
		for _, e := range es {
			out = append(out, tracing.Answer{Entity: e, Score: 3})
		}
		return out
	}
	alts := []tracing.Alternative{{Answers: nil}, {Group: 1, Graphs: []int{1}, Answers: a(7)}, {Group: 2, Graphs: []int{2}, Answers: a(7, 8)}, {Group: 3, Graphs: []int{3}, Answers: a(9)}}
	if got := agreement(alts, 1); math.Abs(got-0.5) > 1e-9 {
		t.Errorf("agreement %v, want 0.5 (one of the two others)", got)
	}
	cands, err := Candidates(context.Background(), Input{Question: "q", Trace: &tracing.Result{Alternatives: alts}})
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 4 || cands[0].Features[0] != 1 || cands[1].Features[4] != 1 || cands[2].Features[4] != 0 {
		t.Fatalf("candidates %+v", cands)
	}
	m := &Model{Features: Names, Weights: make([]float64, len(Names))}
	if k := m.Choose(cands); k != 1 || cands[0].Score != 0 {
		t.Errorf("non-selecting model chose %d (scores %v), want 1, the first that binds", k, cands[0].Score)
	}
	m.Weights[5] = 5 // agree
	m.Select = true
	if k := m.Choose(cands); k != 1 && k != 2 {
		t.Errorf("selecting model chose %d, want an agreeing reading", k)
	}
	m.Weights[5], m.Weights[3] = 0, -5 // fewer answers
	if k := m.Choose(cands); k != 1 && k != 3 {
		t.Errorf("selecting model chose %d, want a one-answer reading", k)
	}
}

// TestTrain fits a model on readings whose first feature says they are
// right three times in four: it chooses by it, and its calibrated
// confidence of the chosen reading is near 0.75.
func TestTrain(t *testing.T) {
	if _, err := Train(nil, TrainOptions{}); !errors.Is(err, ErrNoExamples) {
		t.Errorf("no questions: %v, want ErrNoExamples", err)
	}
	var qs []Question
	for i := 0; i < 400; i++ {
		good, bad := make([]float64, len(Names)), make([]float64, len(Names))
		good[7], bad[7] = 1, 0 // lex_fit
		qs = append(qs, Question{Rows: [][]float64{bad, good}, Labels: []bool{false, i%4 != 0}})
	}
	m, err := Train(qs, TrainOptions{Steps: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Select || !m.Calibrated() || m.Trained != 320 || m.Held != 80 || m.Weights[7] <= 0 {
		t.Fatalf("model %+v", m)
	}
	cands := []Candidate{{Features: qs[0].Rows[0], Answers: nonEmpty}, {Features: qs[0].Rows[1], Answers: nonEmpty}}
	if k := m.Choose(cands); k != 1 || math.Abs(cands[1].Confidence-0.75) > 0.05 {
		t.Errorf("chose %d with confidence %.3f, want 1 at about 0.75", k, cands[1].Confidence)
	}
	path := filepath.Join(t.TempDir(), "sel.json")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Bias != m.Bias || back.Platt.A != m.Platt.A || back.Weights[7] != m.Weights[7] {
		t.Errorf("loaded %+v, saved %+v", back, m)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("a missing file loaded")
	}
}

// TestTrainAnswers learns an answer order where the gold answer is the
// one more readings bind, placed second by tracing: the model puts it
// first, and a reading is labelled by the answer it then puts first.
func TestTrainAnswers(t *testing.T) {
	var qs []Question
	for range 200 {
		row := make([]float64, len(Names))
		first, second := make([]float64, len(AnswerNames)), make([]float64, len(AnswerNames))
		second[2], second[7] = 1, 0.5 // readings, position
		qs = append(qs, Question{Rows: [][]float64{row}, Labels: []bool{false},
			Answers: [][][]float64{{first, second}}, AnswerLabels: [][]bool{{false, true}}})
	}
	m, err := Train(qs, TrainOptions{Steps: 500, Answers: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Answer) != len(AnswerNames) || m.Answer[2] <= 0 {
		t.Fatalf("answer weights %v, want readings weighed up", m.Answer)
	}
	alts := []tracing.Alternative{{Answers: []tracing.Answer{{Entity: 1, Name: "a", Score: 2}, {Entity: 2, Name: "b", Score: 2}}},
		{Group: 1, Answers: []tracing.Answer{{Entity: 2, Name: "b", Score: 2}}}}
	in := Input{Question: "q", Trace: &tracing.Result{Alternatives: alts}}
	cands, err := Candidates(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	got := m.Order(in, cands[0], alts[0].Answers)
	if got[0].Name != "b" || got[1].Name != "a" {
		t.Errorf("ordered %v, want b (bound by both readings) first", got)
	}
	m.Score(cands)
	if cands[0].Confidence < 0.9 {
		t.Errorf("confidence %.3f, want the relabelled readings (all right now) to be sure", cands[0].Confidence)
	}
	if plain, _ := Train(qs, TrainOptions{Steps: 10}); plain.Answer != nil {
		t.Errorf("answer weights learnt without TrainOptions.Answers: %v", plain.Answer)
	}
}

// Every reading carries the planner's demoted score (a preferred plan
// that reaches nothing in the KG), clipped to [0, 1]; 0 when none was.
func TestDemotedFeature(t *testing.T) {
	k := slices.Index(Names, "demoted")
	if k < 0 {
		t.Fatal("no demoted feature")
	}
	alts := []tracing.Alternative{{Graphs: []int{0}, Answers: []tracing.Answer{{Entity: 1, Score: 2}}}, {Group: 1, Graphs: []int{1}}}
	last := slices.Index(Names, "demoted_last")
	for _, tc := range []struct {
		demoted       float32
		lastOnly      bool
		want, wantEnd float64
	}{{0, false, 0, 0}, {0.25, false, 0.25, 0}, {0.25, true, 0.25, 0.25}, {1.7, true, 1, 1}, {-0.5, true, 0, 0}} {
		proj := projection.Projection{Demoted: tc.demoted, DemotedLast: tc.lastOnly, Candidates: []projection.Candidate{{Score: 0.5}, {Score: 0.25}}}
		cands, err := Candidates(context.Background(), Input{Question: "q", Projection: proj, Trace: &tracing.Result{Alternatives: alts}})
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range cands {
			if got := c.Features[k]; math.Abs(got-tc.want) > 1e-6 {
				t.Errorf("demoted %g: reading %d has %g, want %g", tc.demoted, i, got, tc.want)
			}
			if got := c.Features[last]; math.Abs(got-tc.wantEnd) > 1e-6 {
				t.Errorf("demoted %g (last step only %v): reading %d has demoted_last %g, want %g", tc.demoted, tc.lastOnly, i, got, tc.wantEnd)
			}
		}
	}
}

// TestOriginFeatures reads which planner of a merged beam proposed each
// reading, and its rank there; a beam of one planner is its own.
func TestOriginFeatures(t *testing.T) {
	one := []tracing.Answer{{Entity: 1, Name: "a", Score: 2}}
	alts := []tracing.Alternative{{Graphs: []int{0}, Answers: one}, {Group: 1, Graphs: []int{1}, Answers: one}, {Group: 2, Graphs: []int{2}, Answers: one}}
	path := schema.Path("X", "r")
	merged := projection.Projection{Candidates: []projection.Candidate{
		{Graph: path, Origin: projection.Origin{Merged: true}},
		{Graph: path, Origin: projection.Origin{Merged: true, Rank: 1, Both: true}},
		{Graph: path, Origin: projection.Origin{Merged: true, Second: true}},
	}}
	single := projection.Projection{Candidates: []projection.Candidate{{Graph: path}, {Graph: path}, {Graph: path}}}
	feature := func(c Candidate, name string) float64 { return c.Features[slices.Index(Names, name)] }
	for _, tc := range []struct {
		name string
		p    projection.Projection
		want [][4]float64 // zero_shot, both_plan, own_rank, own_first
	}{
		{"merged", merged, [][4]float64{{0, 0, 0, 1}, {0, 1, 1.0 / 3, 0}, {1, 0, 0, 1}}},
		{"one planner", single, [][4]float64{{0, 0, 0, 1}, {0, 0, 1.0 / 3, 0}, {0, 0, 2.0 / 3, 0}}},
	} {
		cands, err := Candidates(context.Background(), Input{Question: "q", Projection: tc.p, Trace: &tracing.Result{Alternatives: alts}})
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range cands {
			got := [4]float64{feature(c, "zero_shot"), feature(c, "both_plan"), feature(c, "own_rank"), feature(c, "own_first")}
			if got != tc.want[i] {
				t.Errorf("%s: reading %d: zero_shot, both_plan, own_rank, own_first = %v, want %v", tc.name, i, got, tc.want[i])
			}
		}
	}
}

func TestBackwardAndWordsLeft(t *testing.T) {
	q := words("what is the time zones of the place of birth of Marco Mobari ?")
	content := contentWords(q, []tracing.Anchor{{Name: "Marco Mobari"}})
	if got := strings.Join(content, " "); got != "time zones place birth" {
		t.Fatalf("content words %q, want the words that may name a relation", got)
	}
	forward := schema.Path("Marco Mobari", "people.person.place_of_birth", "location.location.time_zones")
	for _, tc := range []struct {
		name           string
		g              schema.Graph
		backward, left float64
	}{
		{"forward, every word named", forward, 0, 0},
		{"one hop, time zones left", schema.Path("Marco Mobari", "people.person.place_of_birth"), 0, 0.5},
		{"second hop reversed", schema.PathGraph("Marco Mobari", []schema.Step{{Rel: "people.person.place_of_birth"}, {Rel: "people.person.places_lived", Dir: schema.Inverse}}), 0.5, 0.5},
		{"no triples", schema.Graph{}, 0, 1},
	} {
		if got := backward(tc.g); math.Abs(got-tc.backward) > 1e-9 {
			t.Errorf("%s: backward %v, want %v", tc.name, got, tc.backward)
		}
		if got := wordsLeft(content, tc.g); math.Abs(got-tc.left) > 1e-9 {
			t.Errorf("%s: words_left %v, want %v", tc.name, got, tc.left)
		}
	}
}

// The held-out negatives are weighted to the share asked of the
// calibration; without a share, with CalibrateAnswerable or with one
// kind of question only, every question counts once.
func TestShareWeights(t *testing.T) {
	for _, tc := range []struct {
		name string
		neg  []float64
		o    TrainOptions
		want []float64
	}{
		{"one in five", []float64{1, 0, 0, 0}, TrainOptions{UnanswerableShare: 0.2}, []float64{0.75, 1, 1, 1}},
		{"half of them negatives, a tenth asked", []float64{1, 1, 0, 0}, TrainOptions{UnanswerableShare: 0.1}, []float64{1.0 / 9, 1.0 / 9, 1, 1}},
		{"no share", []float64{1, 0}, TrainOptions{}, nil},
		{"answerable only wins", []float64{1, 0}, TrainOptions{UnanswerableShare: 0.2, CalibrateAnswerable: true}, nil},
		{"all negatives", []float64{1, 1}, TrainOptions{UnanswerableShare: 0.2}, nil},
		{"none negative", []float64{0, 0}, TrainOptions{UnanswerableShare: 0.2}, nil},
	} {
		got := shareWeights(tc.neg, tc.o)
		if len(got) != len(tc.want) {
			t.Fatalf("%s: %v, want %v", tc.name, got, tc.want)
		}
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-9 {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
				break
			}
		}
	}
}

// Weighing the negatives moves the calibration: with none of the
// answerable questions wrong below a logit of 0, only the negatives say
// a low logit is wrong.
func TestPlattWeights(t *testing.T) {
	zs := []float64{-2, -2, -2, -2, 2, 2, 2, 2, -2}
	ls := []float64{0, 0, 0, 0, 1, 1, 1, 1, 1}
	light := []float64{0.1, 0.1, 0.1, 0.1, 1, 1, 1, 1, 1}
	a0, c0 := platt(zs, ls, nil)
	a1, c1 := platt(zs, ls, light)
	p0, p1 := sigmoid(a0*-2+c0), sigmoid(a1*-2+c1)
	if !(p1 > p0) || p0 > 0.5 || p1 < 0.5 {
		t.Errorf("confidence at -2: %.3f with every question once, %.3f with the negatives weighed 0.1; want below and above 0.5", p0, p1)
	}
}
