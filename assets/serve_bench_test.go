package assets_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/assets"
	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/eval/planeval"
	"github.com/stem-kgqa/stem/internal/shareddata"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection/pattern"
	"github.com/stem-kgqa/stem/serve"
)

// serveClients is the number of clients asking at once, as `hey -c 8`
// did in the measurement the benchmark stands for.
const serveClients = 8

// BenchmarkServeDefaultVsPattern serves MetaQA as `stem serve --kg kb.txt`
// does, over HTTP on a loopback port, and asks it the first 300 MetaQA
// test 2-hop questions (with their entities) with 8 clients, in turns:
// once with the default path (compose, no planner model) and once with a
// pattern planner trained on 3,000 MetaQA dev 2-hop questions (trained
// before the timer starts). It reports each one's throughput and their
// ratio, compose/pattern: one run on one machine, so the ratio holds when
// the machine is shared.
//
//	GOEXPERIMENT=simd go test -run '^$' -bench ServeDefaultVsPattern -benchtime 3x ./assets
func BenchmarkServeDefaultVsPattern(b *testing.B) {
	ctx := context.Background()
	kbPath := shareddata.Path(b, "metaqa/kb.txt")
	dev, err := benchmark.LoadMetaQA(ctx, shareddata.Path(b, "metaqa/qa_dev_2hop.txt"), shareddata.Path(b, "metaqa/qtype_dev_2hop.txt"))
	if err != nil {
		b.Fatal(err)
	}
	test, err := benchmark.LoadMetaQA(ctx, shareddata.Path(b, "metaqa/qa_test_2hop.txt"), shareddata.Path(b, "metaqa/qtype_test_2hop.txt"))
	if err != nil {
		b.Fatal(err)
	}
	srv := serve.New(serve.Options{Loopback: true, MaxConcurrent: 4 * serveClients})
	env, err := assets.Open(ctx, assets.Config{KG: kbPath, Open: kg.OpenOptions{Format: kg.FormatAuto}, Encoder: catalog.DefaultEncoderSettings(), Log: io.Discard})
	if err != nil {
		b.Skipf("the default encoder and lexicon are not available (run stem setup): %v", err)
	}
	defer env.Close()
	m, err := pattern.Train(ctx, env.Plan.Encoder, planeval.Examples(dev[:min(len(dev), 3000)]), pattern.Options{})
	if err != nil {
		b.Fatal(err)
	}
	model := filepath.Join(b.TempDir(), "metaqa.stempat")
	if err := m.Save(model); err != nil {
		b.Fatal(err)
	}
	s := plan.DefaultSettings()
	s.Planner, s.PlannerModel = "compose", model
	backend, err := env.Backend(ctx, s)
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.Load(ctx, backend); err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln) }()
	defer func() {
		cancel()
		<-done
		srv.Close()
	}()
	url := "http://" + ln.Addr().String() + "/v1/ask"
	planners := []string{"compose", "pattern"}
	bodies := make([][][]byte, len(planners))
	for i, p := range planners {
		for _, q := range test[:min(len(test), 300)] {
			body, err := json.Marshal(serve.AskRequest{Question: q.Text, Entities: q.Entities, Planner: p})
			if err != nil {
				b.Fatal(err)
			}
			bodies[i] = append(bodies[i], body)
		}
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: serveClients}}
	// One pass unmeasured, so that both planners' pipelines are open and
	// their caches warm; a question either planner cannot answer (422:
	// no plan) is left out of both, as stem bench serve leaves out what
	// fails in its warm-up.
	ok := make([]bool, len(bodies[0]))
	for i := range ok {
		ok[i] = true
		for j := range planners {
			code, err := ask(client, url, bodies[j][i])
			if err != nil {
				b.Fatal(err)
			}
			ok[i] = ok[i] && code == http.StatusOK
		}
	}
	for j := range planners {
		kept := bodies[j][:0]
		for i, body := range bodies[j] {
			if ok[i] {
				kept = append(kept, body)
			}
		}
		bodies[j] = kept
	}
	b.Logf("%d questions answered by both planners", len(bodies[0]))
	took := make([]time.Duration, len(planners))
	asked := 0
	for b.Loop() {
		for i := range planners {
			start := time.Now()
			if err := askAll(client, url, bodies[i]); err != nil {
				b.Fatal(err)
			}
			took[i] += time.Since(start)
		}
		asked += len(bodies[0])
	}
	qps := make([]float64, len(planners))
	for i, p := range planners {
		qps[i] = float64(asked) / took[i].Seconds()
		b.ReportMetric(qps[i], p+"-q/s")
	}
	b.ReportMetric(qps[0]/qps[1], "compose/pattern")
}

// askAll posts every body to url, serveClients at a time, and fails on
// any reply but 200.
func askAll(c *http.Client, url string, bodies [][]byte) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, serveClients)
	for range serveClients {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(bodies) {
					return
				}
				code, err := ask(c, url, bodies[i])
				if err == nil && code != http.StatusOK {
					err = &statusError{code}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// ask posts body to url and returns the reply's status, its body read.
func ask(c *http.Client, url string, body []byte) (int, error) {
	resp, err := c.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// statusError is a reply's status other than 200.
type statusError struct{ code int }

func (e *statusError) Error() string { return "serve: reply status " + http.StatusText(e.code) }
