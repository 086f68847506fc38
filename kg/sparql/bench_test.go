package sparql_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/eval"
	"github.com/stem-kgqa/stem/internal/virtuoso"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/sparql"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/pattern"
)

// benchAnswers, when set, names a directory where
// BenchmarkWebQSPOverSPARQL writes each planner's answers and evidence,
// one JSON line a question (PLANNER.jsonl), so two versions' answers can
// be compared line for line after a change made for speed, and each
// question's time, queries, rows fetched and stages (PLANNER-times.tsv),
// to see which questions make the tail and why.
var benchAnswers = flag.String("bench.answers", "", "directory for BenchmarkWebQSPOverSPARQL's answers, one JSON line a question per planner (compare two versions with diff)")

// benchOnly, when set, keeps the questions whose text it matches, and
// benchTrace logs every query each of them sent: its rows and time, to
// see what makes a slow question slow.
var (
	benchOnly  = flag.String("bench.only", "", "regular expression: BenchmarkWebQSPOverSPARQL answers only the questions whose text it matches")
	benchTrace = flag.Bool("bench.trace", false, "BenchmarkWebQSPOverSPARQL logs each query a question sent, with its rows and time")
)

// BenchmarkWebQSPOverSPARQL answers every WebQSP-mini test question over
// the shared WebQSP KG (the union of the questions' own graphs, 33,200
// triples) served by a private Virtuoso on loopback, one question at a
// time with a cold cache, and reports the latency per question of the
// whole pipeline (linking, fetching, planning, tracing) with the oracle
// and the pattern planner: p50, p95 and max in ms, and logs the slowest
// questions. The target is p95 <= 100 ms and max <= 2 s.
//
//	GOEXPERIMENT=simd go test ./kg/sparql -run '^$' -bench WebQSPOverSPARQL -benchtime 1x -v
func BenchmarkWebQSPOverSPARQL(b *testing.B) {
	virtuoso.SkipUnavailable(b)
	ctx := context.Background()
	enc := encoder(b)
	var set benchmarkSet
	for _, s := range benchmarkSets(ctx) {
		if s.name == "WebQSP-mini" {
			set = s
		}
	}
	qs := set.test(b)
	path := filepath.Join(b.TempDir(), "webqsp-union.tsv")
	writeTSV(b, path, union(b, qs))
	for i := range qs {
		qs[i].Graph = nil
	}
	if *benchOnly != "" {
		re, err := regexp.Compile(*benchOnly)
		if err != nil {
			b.Fatal(err)
		}
		qs = slices.DeleteFunc(qs, func(q benchmark.Question) bool { return !re.MatchString(q.Text) })
	}
	file, err := kg.Load(ctx, path, kg.FormatAuto)
	if err != nil {
		b.Fatal(err)
	}
	endpoint, graph := virtuosoEngine.serve(b, file)
	model, err := pattern.Train(ctx, enc, set.train(b), pattern.Options{Epochs: webqspEpochs})
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"oracle", "pattern"} {
		b.Run(name, func(b *testing.B) {
			for range b.N {
				var mu sync.Mutex
				var sent []string
				var queries, rows int // of the question being answered
				cfg := sparql.Config{Endpoint: endpoint, Graph: graph}
				cfg.Trace = func(q string, n int, took time.Duration) {
					mu.Lock()
					defer mu.Unlock()
					queries, rows = queries+1, rows+n
					if *benchTrace {
						sent = append(sent, fmt.Sprintf("%8.1f ms %6d rows %6d bytes: %.400s", float64(took.Microseconds())/1000, n, len(q), q))
					}
				}
				remote, err := sparql.Open(cfg)
				if err != nil {
					b.Fatal(err)
				}
				s := plan.DefaultSettings()
				a := plan.Assets{Graph: remote, Encoder: enc}
				s.Planner = plan.PlannerName(name)
				if name == "pattern" {
					pl, err := pattern.New(model, enc, pattern.Config{Graph: remote})
					if err != nil {
						b.Fatal(err)
					}
					s.Planner, a.AutoPlanner = "auto", projection.Planner(pl)
				}
				p, closeP, err := plan.Open(ctx, s, a)
				if err != nil {
					b.Fatal(err)
				}
				type timed struct {
					q             benchmark.Question
					d             time.Duration
					stages        map[string]time.Duration
					queries, rows int
				}
				var ts []timed
				var lines []byte
				ep := eval.Pipeline{Pipeline: p}
				for _, q := range qs {
					mu.Lock()
					queries, rows = 0, 0
					mu.Unlock()
					start := time.Now()
					pred, err := ep.Answer(ctx, q)
					mu.Lock()
					ts = append(ts, timed{q: q, d: time.Since(start), stages: pred.Stages, queries: queries, rows: rows})
					mu.Unlock()
					if *benchTrace {
						mu.Lock()
						b.Logf("%q: %.0f ms, %d queries:\n%s", q.Text, float64(time.Since(start).Microseconds())/1000, len(sent), strings.Join(sent, "\n"))
						sent = nil
						mu.Unlock()
					}
					line, _ := json.Marshal(struct {
						ID       string
						Answers  []string
						Evidence [][3]string
						Err      string `json:",omitempty"`
					}{q.ID, pred.Answers, pred.EvidenceTriples, errText(err)})
					lines = append(append(lines, line...), '\n')
				}
				if *benchAnswers != "" {
					if err := os.WriteFile(filepath.Join(*benchAnswers, name+".jsonl"), lines, 0o644); err != nil {
						b.Fatal(err)
					}
				}
				closeP()
				ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
				stages := func(x timed) string {
					var st []string
					for k, d := range x.stages {
						st = append(st, fmt.Sprintf("%s %.0f", k, ms(d)))
					}
					slices.Sort(st)
					return strings.Join(st, ", ")
				}
				if *benchAnswers != "" {
					var tsv []byte
					for _, x := range ts {
						tsv = fmt.Appendf(tsv, "%s\t%.1f\t%d\t%d\t%s\t%q\n", x.q.ID, ms(x.d), x.queries, x.rows, stages(x), x.q.Text)
					}
					if err := os.WriteFile(filepath.Join(*benchAnswers, name+"-times.tsv"), tsv, 0o644); err != nil {
						b.Fatal(err)
					}
				}
				slices.SortFunc(ts, func(x, y timed) int { return int(x.d - y.d) })
				at := func(f float64) time.Duration { return ts[min(len(ts)-1, int(f*float64(len(ts))))].d }
				b.ReportMetric(ms(at(0.5)), "p50_ms")
				b.ReportMetric(ms(at(0.95)), "p95_ms")
				b.ReportMetric(ms(ts[len(ts)-1].d), "max_ms")
				b.ReportMetric(float64(remote.Stats().Queries)/float64(len(qs)), "queries/q")
				for _, x := range slices.Backward(ts[max(0, len(ts)-8):]) {
					b.Logf("slow: %s %q (entities %q): %.0f ms, %d queries, %d rows (%s)", x.q.ID, x.q.Text, x.q.Entities, ms(x.d), x.queries, x.rows, stages(x))
				}
			}
		})
	}
}

// errText is err's message, or "" for none.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
