package compose_test

import (
	"bufio"
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/internal/shareddata"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/projection/compose"
	"github.com/stem-kgqa/stem/projection/pattern"
	"github.com/stem-kgqa/stem/train/selfsup"
)

// BenchmarkPlanMetaQA plans the first 500 MetaQA dev 2-hop questions over
// the MetaQA KG (130,471 triples) and reports the median and 95th
// percentile planning time per question, with compose alone and with a
// model trained from the KG alone beside it (trained before the timer
// starts):
//
//	GOEXPERIMENT=simd go test -run '^$' -bench PlanMetaQA -benchtime 1x ./projection/compose
func BenchmarkPlanMetaQA(b *testing.B) {
	ctx := context.Background()
	enc, lex := realEncoder(b), realLexicon(b)
	g, qs := metaQADev(b, 500)
	m, _, err := selfsup.Train(ctx, g, enc, selfsup.Options{Lexicon: lex}, nil)
	if err != nil {
		b.Fatal(err)
	}
	learnt, err := pattern.New(m, enc, pattern.Config{})
	if err != nil {
		b.Fatal(err)
	}
	plain, err := compose.New(ctx, g, enc, compose.Config{Lexicon: lex})
	if err != nil {
		b.Fatal(err)
	}
	trained, err := compose.New(ctx, g, enc, compose.Config{Lexicon: lex, Learnt: learnt, LearntWeight: m.Prior().Weight})
	if err != nil {
		b.Fatal(err)
	}
	// The two planners take turns on each question, so that the load of a
	// shared machine weighs on both alike.
	times := [2][]time.Duration{}
	for b.Loop() {
		for _, q := range qs {
			for i, p := range []*compose.Planner{plain, trained} {
				start := time.Now()
				if _, err := p.Predict(ctx, q.text, []string{q.entity}, nil); err != nil {
					b.Fatal(err)
				}
				times[i] = append(times[i], time.Since(start))
			}
		}
	}
	for i, name := range []string{"compose", "trained"} {
		slices.Sort(times[i])
		b.ReportMetric(float64(times[i][len(times[i])/2].Microseconds())/1000, name+"-p50-ms")
		b.ReportMetric(float64(times[i][len(times[i])*95/100].Microseconds())/1000, name+"-p95-ms")
	}
}

// BenchmarkPredictMetaQA plans the first 500 MetaQA dev 2-hop questions
// with compose alone (no learnt prior, nothing trained first), so that a
// profile of it is the planner's own:
//
//	GOEXPERIMENT=simd go test -run '^$' -bench PredictMetaQA -benchtime 3x -cpuprofile cpu.out ./projection/compose
func BenchmarkPredictMetaQA(b *testing.B) {
	ctx := context.Background()
	g, qs := metaQADev(b, 500)
	p, err := compose.New(ctx, g, realEncoder(b), compose.Config{Lexicon: realLexicon(b)})
	if err != nil {
		b.Fatal(err)
	}
	var times []time.Duration
	for b.Loop() {
		for _, q := range qs {
			start := time.Now()
			if _, err := p.Predict(ctx, q.text, []string{q.entity}, nil); err != nil {
				b.Fatal(err)
			}
			times = append(times, time.Since(start))
		}
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(times[len(times)*95/100].Microseconds())/1000, "p95-ms")
}

// metaQAQuestion is a MetaQA question and its bracketed entity.
type metaQAQuestion struct{ text, entity string }

// metaQADev loads the MetaQA KG and the first n dev 2-hop questions whose
// entity it knows.
func metaQADev(b *testing.B, n int) (*kg.Graph, []metaQAQuestion) {
	ctx := context.Background()
	kbPath := shareddata.Path(b, "metaqa/kb.txt")
	qPath := shareddata.Path(b, "metaqa/qa_dev_2hop.txt")
	g, err := kg.Load(ctx, kbPath, kg.FormatAuto)
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(qPath)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var qs []metaQAQuestion
	bracket := regexp.MustCompile(`\[([^\]]+)\]`)
	sc := bufio.NewScanner(f)
	for sc.Scan() && len(qs) < n {
		line, _, _ := strings.Cut(sc.Text(), "\t")
		if m := bracket.FindStringSubmatch(line); m != nil {
			if _, ok := g.Entity(m[1]); ok {
				qs = append(qs, metaQAQuestion{line, m[1]})
			}
		}
	}
	return g, qs
}

// BenchmarkNewMetaQA builds the planner over the MetaQA KG: what it reads
// once per KG (each relation's words and vectors, the kinds an entity may
// be found of) before its first question.
//
//	GOEXPERIMENT=simd go test -run '^$' -bench NewMetaQA -benchtime 5x ./projection/compose
func BenchmarkNewMetaQA(b *testing.B) {
	ctx := context.Background()
	enc, lex := realEncoder(b), realLexicon(b)
	g, _ := metaQADev(b, 0)
	for b.Loop() {
		if _, err := compose.New(ctx, g, enc, compose.Config{Lexicon: lex}); err != nil {
			b.Fatal(err)
		}
	}
}
