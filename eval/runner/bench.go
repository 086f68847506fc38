package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"time"

	"github.com/stem-kgqa/stem/assets"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/serve"
	"github.com/stem-kgqa/stem/serve/load"
)

// BenchOptions are stem bench serve's own settings, beside the dataset's
// and the pipeline's.
type BenchOptions struct {
	Clients     int           `flag:"clients" min:"1" max:"4096" category:"load" usage:"concurrent clients, each with its own keep-alive connection"`
	Duration    time.Duration `flag:"duration" category:"load" usage:"length of the timed run (0 = until --max-requests)"`
	MaxRequests int           `flag:"max-requests" min:"0" category:"load" usage:"stop after N requests (0 = until --duration); the run stops at whichever comes first"`
	Interval    time.Duration `flag:"interval" category:"load" usage:"print a progress line and sample the server's memory every INTERVAL"`
	JSON        bool          `flag:"json" usage:"print the report as one JSON object instead of a table"`
	URL         string        `flag:"url" placeholder:"URL" category:"load" usage:"drive the stem serve already running at URL (this machine only) instead of one started in-process"`
	TokenEnv    string        `flag:"token-env" placeholder:"VAR" category:"load" usage:"with --url: send 'Authorization: Bearer TOKEN', TOKEN read from environment variable VAR"`
}

// DefaultBenchOptions are stem bench serve's defaults.
func DefaultBenchOptions() BenchOptions {
	return BenchOptions{Clients: 8, Duration: 60 * time.Second, Interval: 5 * time.Second}
}

// Bench runs stem bench serve: it asks d's questions of a stem serve, the
// one at b.URL or one started in this process from the same settings
// (reporting version), and prints the load test's report to w.
func Bench(ctx context.Context, w, log io.Writer, d Dataset, b BenchOptions, s plan.Settings, encS catalog.EncoderSettings, cpuProfile, version string) (err error) {
	if err := d.Source().Check(); err != nil {
		return err
	}
	if b.Duration < 0 || b.Interval < 0 {
		return fmt.Errorf("bench serve: --duration %s, --interval %s: want positive durations", b.Duration, b.Interval)
	}
	if b.Duration == 0 && b.MaxRequests == 0 {
		return fmt.Errorf("bench serve: give --duration or --max-requests, or the run never ends")
	}
	var token string
	if b.URL != "" {
		if _, err := load.CheckLoopback(b.URL); err != nil {
			return fmt.Errorf("bench serve: --url: %w", err)
		}
		if b.TokenEnv != "" {
			if token = os.Getenv(b.TokenEnv); token == "" {
				return fmt.Errorf("bench serve: --token-env %s: the variable is unset or empty", b.TokenEnv)
			}
		}
	} else {
		if b.TokenEnv != "" {
			return fmt.Errorf("bench serve: --token-env goes with --url; the in-process server wants no token")
		}
		if err := assets.CheckServed(s, "bench serve"); err != nil {
			return err
		}
	}
	reqs, graph, err := benchRequests(ctx, d, log)
	if err != nil {
		return err
	}
	url := b.URL
	if url == "" {
		var stop func() error
		if url, stop, err = (benchServer{d: d, graph: graph, s: s, encS: encS, version: version, log: log}).start(ctx); err != nil {
			return err
		}
		defer func() {
			if serr := stop(); serr != nil {
				err = errors.Join(err, serr)
			}
		}()
	}
	cfg := load.Config{URL: url, Token: token, Requests: reqs, Clients: b.Clients, Duration: b.Duration,
		MaxRequests: int64(b.MaxRequests), Interval: b.Interval, Progress: log}
	if cfg.Requests, cfg.Expect, err = warmUp(ctx, cfg, log); err != nil {
		return err
	}
	stop, err := StartCPUProfile(cpuProfile)
	if err != nil {
		return fmt.Errorf("bench serve: %w", err)
	}
	defer stop()
	fmt.Fprintf(log, "bench serve: %d clients, %d questions, %s\n", cfg.Clients, len(cfg.Requests), bounds(b))
	rep, err := load.Run(ctx, cfg)
	if rep == nil {
		return err
	}
	// An interrupted run still shows what it measured; the error follows.
	if b.JSON {
		return errors.Join(err, rep.WriteJSON(w))
	}
	return errors.Join(err, rep.WriteTable(w))
}

// bounds says how a run ends, for its first line.
func bounds(b BenchOptions) string {
	switch {
	case b.MaxRequests == 0:
		return fmt.Sprintf("for %s", b.Duration)
	case b.Duration == 0:
		return fmt.Sprintf("for %d requests", b.MaxRequests)
	}
	return fmt.Sprintf("for %s or %d requests, whichever comes first", b.Duration, b.MaxRequests)
}

// benchRequests loads the dataset's questions (--answerable-only, --limit
// as stem eval) as ask requests with their topic entities, and returns the
// shared KG it opened with them, which the in-process server answers over
// rather than opening (and mapping) it a second time.
func benchRequests(ctx context.Context, d Dataset, log io.Writer) ([]serve.AskRequest, kg.Reader, error) {
	data, err := d.Load(ctx, log)
	if err != nil {
		return nil, nil, err
	}
	reqs := make([]serve.AskRequest, 0, len(data.Questions))
	for _, q := range data.Questions {
		if q.Graph != nil {
			return nil, nil, fmt.Errorf("bench serve: --format %s: question %s brings its own KG, which a server does not take; use a shared-KG format (pq, metaqa)", d.Format, q.ID)
		}
		reqs = append(reqs, serve.AskRequest{Question: q.Text, Entities: q.Entities})
	}
	if d.KG == "" {
		// A format that finds its KG itself is served as before: the
		// server opens what --kg names (or the demo KG).
		return reqs, nil, nil
	}
	return reqs, data.KG, nil
}

// warmUp asks every request once and returns those that were answered
// with their answers, the timed run's expectations.
func warmUp(ctx context.Context, cfg load.Config, log io.Writer) ([]serve.AskRequest, map[string][]string, error) {
	start := time.Now()
	expect, failed, err := load.Baseline(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(log, "warm-up: asked the %d questions once in %s", len(cfg.Requests), time.Since(start).Round(time.Millisecond))
	if len(failed) > 0 {
		qs := make([]string, 0, len(failed))
		for q := range failed {
			qs = append(qs, q)
		}
		slices.Sort(qs)
		fmt.Fprintf(log, "; %d failed and are left out of the timed run (e.g. %q: %s)", len(failed), qs[0], failed[qs[0]])
	}
	fmt.Fprintln(log)
	kept := slices.DeleteFunc(slices.Clone(cfg.Requests), func(r serve.AskRequest) bool {
		_, bad := failed[r.Question]
		return bad
	})
	if len(kept) == 0 {
		return nil, nil, fmt.Errorf("bench serve: every question failed in the warm-up; nothing to time")
	}
	return kept, expect, nil
}

// benchServer is the server stem bench serve starts in-process: d's KG
// (graph, when the questions' loading opened it already) answered with
// settings s and encS, reporting version, logging to log.
type benchServer struct {
	d       Dataset
	graph   kg.Reader
	s       plan.Settings
	encS    catalog.EncoderSettings
	version string
	log     io.Writer
}

// start starts the server stem serve builds from the same settings, on a
// loopback port of this process, and returns its URL and the function
// that shuts it down gracefully and closes what it loaded.
func (b benchServer) start(ctx context.Context) (string, func() error, error) {
	d, s, encS, version, log := b.d, b.s, b.encS, b.version, b.log
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("bench serve: listen on 127.0.0.1: %w", err)
	}
	srv := serve.New(serve.Options{Loopback: true, Version: version})
	start := time.Now()
	cfg := assets.Config{KG: d.KG, Graph: b.graph, Demo: true, Beam: s.Beam.Value(), Open: kg.OpenOptions{Format: kg.FormatAuto, Settings: d.Backends}, Encoder: encS, Log: log}
	closeAssets, err := assets.Load(ctx, srv, cfg, s)
	if err != nil {
		ln.Close()
		return "", nil, errors.Join(err, srv.Close())
	}
	sctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(sctx, ln) }()
	url := "http://" + ln.Addr().String()
	fmt.Fprintf(log, "bench serve: in-process server on %s, loaded in %s\n", url, time.Since(start).Round(time.Millisecond))
	stop := func() error {
		cancel()
		err := <-errc
		return errors.Join(err, srv.Close(), closeAssets())
	}
	return url, stop, nil
}
