package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/serve"
	"github.com/stem-kgqa/stem/serve/load"
	"github.com/urfave/cli/v2"
)

// benchOptions are stem bench serve's own settings, beside the dataset's
// and the pipeline's.
type benchOptions struct {
	Clients     int           `flag:"clients" min:"1" max:"4096" category:"load" usage:"concurrent clients, each with its own keep-alive connection"`
	Duration    time.Duration `flag:"duration" category:"load" usage:"length of the timed run (0 = until --max-requests)"`
	MaxRequests int           `flag:"max-requests" min:"0" category:"load" usage:"stop after N requests (0 = until --duration); the run stops at whichever comes first"`
	Interval    time.Duration `flag:"interval" category:"load" usage:"print a progress line and sample the server's memory every INTERVAL"`
	JSON        bool          `flag:"json" usage:"print the report as one JSON object instead of a table"`
	URL         string        `flag:"url" placeholder:"URL" category:"load" usage:"drive the stem serve already running at URL (this machine only) instead of one started in-process"`
	TokenEnv    string        `flag:"token-env" placeholder:"VAR" category:"load" usage:"with --url: send 'Authorization: Bearer TOKEN', TOKEN read from environment variable VAR"`
}

// cpuProfileFlag is hidden: it is for finding what a run spends its time
// on, not part of the measurement.
var cpuProfileFlag = &cli.StringFlag{Name: "cpuprofile", Hidden: true, Usage: "write a CPU profile of the timed run to FILE"}

// benchCommand groups the load tests.
func benchCommand() *cli.Command {
	return &cli.Command{
		Name:        "bench",
		Usage:       "load-test stem's server",
		Subcommands: []*cli.Command{benchServeSubcommand()},
	}
}

func benchServeSubcommand() *cli.Command {
	d := newDataOptions()
	b := benchOptions{Clients: 8, Duration: 60 * time.Second, Interval: 5 * time.Second}
	s := pipelineSettings()
	enc := catalog.DefaultEncoderSettings()
	return &cli.Command{
		Name:  "serve",
		Usage: "drive stem serve's POST /v1/ask with concurrent clients: throughput, latency, errors, server memory",
		Description: "Asks a benchmark's questions (with their topic entities) over HTTP, --clients at a time, for\n" +
			"--duration or --max-requests, whichever ends first, cycling through the questions. Every\n" +
			"--interval it prints the throughput, p50/p99 latency (client-side), errors, and the server's\n" +
			"resident memory and goroutines read from its /metrics; then a report: throughput,\n" +
			"p50/p95/p99/max latency, errors by kind, memory first/max/last.\n\n" +
			"Without --url it starts the server stem serve would (same flags for the KG, planner and\n" +
			"encoder) in this process on 127.0.0.1, so the clients and the server share the CPU and the\n" +
			"memory figures include the clients. Before the timed run every question is asked once\n" +
			"(the warm-up): its answers become the expected ones, and a reply in the timed run whose\n" +
			"answers differ counts as a \"mismatch\" error. Questions that fail in the warm-up are left\n" +
			"out and counted. With --url the pipeline flags are not used (the server has its own), and\n" +
			"the server must be on this machine: this is a load generator.\n\n" +
			"Formats:\n" + formatHelp() + "\n" +
			"Examples:\n" +
			"  stem train planner --format metaqa --questions qa_dev_2hop.txt --qtype qtype_dev_2hop.txt --out /tmp/metaqa.stempat\n" +
			"  stem bench serve --format metaqa --questions qa_test_2hop.txt --qtype qtype_test_2hop.txt --kg kb.txt \\\n" +
			"        --answerable-only --limit 2000 --planner-model /tmp/metaqa.stempat --clients 8 --duration 60s\n" +
			"  stem serve --kg kb.txt --planner-model /tmp/metaqa.stempat --token-env STEM_TOKEN &\n" +
			"  stem bench serve --url http://127.0.0.1:8080 --token-env STEM_TOKEN --format metaqa ... --json",
		Flags:  append(append(append(append([]cli.Flag{configFlag, cpuProfileFlag}, flagsOf(&d)...), flagsOf(&b)...), flagsOf(&s)...), flagsOf(&enc)...),
		Before: bindWithConfig(&d, &b, &s, &enc),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return fmt.Errorf("bench serve takes no arguments (got %q); the questions come from --questions", c.Args().First())
			}
			return runBenchServe(c.Context, c.App.Writer, c.App.ErrWriter, d, b, s, enc, c.String("cpuprofile"))
		},
	}
}

func runBenchServe(ctx context.Context, w, log io.Writer, d dataOptions, b benchOptions, s plan.Settings, encS catalog.EncoderSettings, cpuProfile string) (err error) {
	if err := d.source().Check(); err != nil {
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
		if err := checkServed(s, "bench serve"); err != nil {
			return err
		}
	}
	reqs, err := benchRequests(ctx, d, log)
	if err != nil {
		return err
	}
	url := b.URL
	if url == "" {
		var stop func() error
		if url, stop, err = startBenchServer(ctx, d, s, encS, log); err != nil {
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
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return fmt.Errorf("bench serve: --cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("bench serve: --cpuprofile %s: %w", cpuProfile, err)
		}
		defer pprof.StopCPUProfile()
	}
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
func bounds(b benchOptions) string {
	switch {
	case b.MaxRequests == 0:
		return fmt.Sprintf("for %s", b.Duration)
	case b.Duration == 0:
		return fmt.Sprintf("for %d requests", b.MaxRequests)
	}
	return fmt.Sprintf("for %s or %d requests, whichever comes first", b.Duration, b.MaxRequests)
}

// benchRequests loads the dataset's questions (--answerable-only, --limit
// as stem eval) as ask requests with their topic entities.
func benchRequests(ctx context.Context, d dataOptions, log io.Writer) ([]serve.AskRequest, error) {
	data, err := d.load(ctx, log)
	if err != nil {
		return nil, err
	}
	reqs := make([]serve.AskRequest, 0, len(data.Questions))
	for _, q := range data.Questions {
		if q.Graph != nil {
			return nil, fmt.Errorf("bench serve: --format %s: question %s brings its own KG, which a server does not take; use a shared-KG format (pq, metaqa)", d.Format, q.ID)
		}
		reqs = append(reqs, serve.AskRequest{Question: q.Text, Entities: q.Entities})
	}
	return reqs, nil
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

// startBenchServer starts the server stem serve builds from the same
// settings, on a loopback port of this process, and returns its URL and
// the function that shuts it down gracefully and closes what it loaded.
func startBenchServer(ctx context.Context, d dataOptions, s plan.Settings, encS catalog.EncoderSettings, log io.Writer) (string, func() error, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("bench serve: listen on 127.0.0.1: %w", err)
	}
	srv := serve.New(serve.Options{Loopback: true, Version: version()})
	start := time.Now()
	o := serveOptions{KG: d.KG, KGFormat: kg.FormatAuto, Backends: d.Backends}
	closeAssets, err := loadBackend(ctx, srv, o, s, encS, log)
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
