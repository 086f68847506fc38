package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/stem-kgqa/stem/assets"
	stemversion "github.com/stem-kgqa/stem/internal/version"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/backends"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/peers"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/serve"
	"github.com/urfave/cli/v2"
)

// serveOptions are stem serve's own settings, beside the pipeline's.
type serveOptions struct {
	KG            string        `flag:"kg" placeholder:"FILE|URL" usage:"KG FILE (any format 'stem kg' reads) or SPARQL endpoint URL; default: the embedded demo KG"`
	KGFormat      kg.Format     `flag:"format" usage:"KG file format: auto, tsv, pipe, nt, snapshot"`
	Listen        string        `flag:"listen" placeholder:"HOST:PORT" category:"server" usage:"address to answer on; the default answers this machine only (use :8080 or 0.0.0.0:8080 for every host, with --token-env)"`
	TokenEnv      string        `flag:"token-env" placeholder:"VAR" category:"server" usage:"require 'Authorization: Bearer TOKEN' on every route but the health checks, TOKEN read from environment variable VAR"`
	Timeout       time.Duration `flag:"timeout" category:"server" usage:"a question's deadline; past it the answer is 504"`
	MaxConcurrent int           `flag:"max-concurrent" min:"1" category:"server" usage:"questions answered at once; beyond it 503 with Retry-After"`
	MaxBody       int           `flag:"max-body" min:"256" category:"server" usage:"largest request body, in bytes (413 beyond)"`
	Grace         time.Duration `flag:"grace" category:"server" usage:"on SIGINT/SIGTERM, how long requests in flight may take to finish"`
	MCPStdio      bool          `flag:"mcp-stdio" category:"server" usage:"serve the MCP tools over stdin/stdout instead of HTTP (for agent clients that launch tools as processes)"`
	Backends      kg.BackendSettings
}

// defaultServeOptions are stem serve's defaults.
func defaultServeOptions() serveOptions {
	return serveOptions{KGFormat: kg.FormatAuto, Listen: "127.0.0.1:8080", Timeout: serve.DefaultTimeout,
		MaxConcurrent: serve.DefaultMaxConcurrent, MaxBody: serve.DefaultMaxBody, Grace: serve.DefaultGrace, Backends: backends.Default().NewSettings()}
}

func serveCommand() *cli.Command {
	o := defaultServeOptions()
	s := pipelineSettings()
	enc := catalog.DefaultEncoderSettings()
	return &cli.Command{
		Name:  "serve",
		Usage: "keep the KG and models loaded and answer over HTTP, MCP and a web page",
		Description: "Loads the KG (file, snapshot or SPARQL endpoint), the encoder, the planner and the GNN once\n" +
			"and answers until SIGINT or SIGTERM, when questions in flight finish (--grace; a second\n" +
			"SIGINT or SIGTERM cuts them off). Routes:\n\n" +
			"  POST /v1/ask                        {\"question\": \"...\", \"entities\": [...], \"planner\": \"...\",\n" +
			"                                       \"strategy\": \"precision\", \"explain\": true} -> the JSON of stem ask --json\n" +
			"  GET  /v1/entities?q=TEXT&k=10       entity search\n" +
			"  GET  /v1/entities/NAME/neighbours   an entity's triples (?limit=100)\n" +
			"  POST /mcp                           MCP tools ask, explain, search_entities, neighbours (streamable HTTP)\n" +
			"  GET  /                              the evidence viewer: ask, see the answer and its subgraph\n" +
			"  GET  /healthz, /readyz, /metrics    liveness, readiness (503 while loading), Prometheus\n\n" +
			"A request may choose the planner among those served: the --planner one (first), compose, schema,\n" +
			"and pattern or llm when their model is given. No request names a file.\n\n" +
			"Examples:\n" +
			"  stem serve                                           # the demo KG on http://127.0.0.1:8080/\n" +
			"  curl -s localhost:8080/v1/ask -H 'Content-Type: application/json' -d '{\"question\": \"who directed inception ?\"}'\n" +
			"  stem serve --kg metaqa.kg --planner-model metaqa.stempat --listen :8080 --token-env STEM_TOKEN\n" +
			"  stem serve --mcp-stdio --kg metaqa.kg --planner-model metaqa.stempat   # for an agent's MCP config",
		Flags:  append(append(append([]cli.Flag{configFlag}, flagsOf(&o)...), flagsOf(&s)...), flagsOf(&enc)...),
		Before: bindWithConfig(&o, &s, &enc),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return fmt.Errorf("serve takes no arguments (got %q); questions come over HTTP or MCP", c.Args().First())
			}
			// The first SIGINT or SIGTERM (main's context) lets the
			// questions in flight finish; a second one cuts them off.
			stop := make(chan os.Signal, 2)
			signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(stop)
			return runServe(c.Context, stdio{c.App.Reader, c.App.Writer, stop}, c.App.ErrWriter, o, s, enc)
		},
	}
}

// stdio is where --mcp-stdio speaks the protocol: the process's standard
// input and output, or a test's pipes; stop delivers the process's stop
// signals (the first also ends ctx; a second cuts the grace short).
type stdio struct {
	in   io.Reader
	out  io.Writer
	stop <-chan os.Signal
}

func runServe(ctx context.Context, std stdio, log io.Writer, o serveOptions, s plan.Settings, encS catalog.EncoderSettings) error {
	if err := checkServed(s, "serve"); err != nil {
		return err
	}
	opts := serve.Options{Timeout: o.Timeout, MaxConcurrent: o.MaxConcurrent, MaxBody: int64(o.MaxBody), Grace: o.Grace, Version: version(), Log: log}
	if o.TokenEnv != "" {
		if opts.Token = os.Getenv(o.TokenEnv); opts.Token == "" {
			return fmt.Errorf("serve: --token-env %s: the variable is unset or empty", o.TokenEnv)
		}
	}
	if o.MCPStdio {
		srv := serve.New(opts)
		defer srv.Close()
		// stdout is the protocol: everything else goes to log.
		closeAssets, err := loadBackend(ctx, srv, o, s, encS, log)
		if err != nil {
			return err
		}
		defer closeAssets()
		fmt.Fprintln(log, "stem serve: MCP tools on stdin/stdout")
		return srv.ServeStdio(ctx, std.in, std.out)
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("serve: --listen %s: %w", o.Listen, err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	opts.Loopback = addr.IP.IsLoopback()
	if !opts.Loopback && opts.Token == "" {
		fmt.Fprintf(log, "stem serve: WARNING: answering every host on %s with no --token-env: anyone who reaches it can ask\n", addr)
	}
	srv := serve.New(opts)
	defer srv.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ctx, ln) }()
	served := make(chan struct{})
	defer close(served)
	go func() {
		for n := 1; ; n++ {
			select {
			case <-std.stop:
			case <-served:
				return
			}
			if n == 1 {
				fmt.Fprintf(log, "stem serve: stopping; the questions in flight have up to %v (--grace) to finish; a second Ctrl-C stops now\n", opts.Grace)
				cancel()
				continue
			}
			fmt.Fprintln(log, "stem serve: stopping now; the questions in flight are cut off")
			srv.Abort()
			return
		}
	}()
	url := fmt.Sprintf("http://%s/", ln.Addr())
	fmt.Fprintf(log, "stem serve: listening on %s; loading the KG and models (/readyz says when) ...\n", url)
	start := time.Now()
	closeAssets, err := loadBackend(ctx, srv, o, s, encS, log)
	if err != nil {
		cancel()
		<-errc
		return err
	}
	defer closeAssets()
	fmt.Fprintf(log, "stem serve: ready in %s: %s (viewer), %sv1/ask, %smcp; Ctrl-C stops\n", time.Since(start).Round(time.Millisecond), url, url, url)
	err = <-errc
	if err == nil {
		fmt.Fprintln(log, "stem serve: stopped; every request in flight was answered")
	}
	return err
}

// checkServed checks settings a server will answer with: those any
// pipeline needs, and a planner that plans without a benchmark's answers.
func checkServed(s plan.Settings, cmd string) error {
	if err := s.Check(peers.Retrievers()); err != nil {
		return err
	}
	if s.Planner == "oracle" {
		return fmt.Errorf("%s: --planner oracle plans from a benchmark's gold answers, which a served question has not; choose pattern, schema or llm", cmd)
	}
	return nil
}

// loadBackend loads the KG, encoder and entity index, hands srv the
// pipelines over them and opens the default one, so a bad --planner-model
// or --gnn is reported at start, not to the first caller. The returned
// function closes the encoder.
func loadBackend(ctx context.Context, srv *serve.Server, o serveOptions, s plan.Settings, encS catalog.EncoderSettings, log io.Writer) (func() error, error) {
	env, err := assets.Open(ctx, assets.Config{KG: o.KG, Demo: true, Beam: s.Beam, Open: kg.OpenOptions{Format: o.KGFormat, Settings: o.Backends}, Encoder: encS, Log: log})
	if err != nil {
		return nil, err
	}
	fail := func(err error) (func() error, error) {
		env.Close()
		return nil, err
	}
	a, err := env.Assets(ctx, s)
	if err != nil {
		return fail(err)
	}
	planners := []string{string(s.Planner)}
	add := func(p string, ok bool) {
		if ok && !slices.Contains(planners, p) {
			planners = append(planners, p)
		}
	}
	add("compose", true)
	add("schema", true)
	add("pattern", s.PlannerModel != "")
	add("llm", s.Chat.Model != "")
	b := serve.Backend{
		Graph:    env.Graph,
		Planners: planners,
		Open: func(ctx context.Context, planner string) (*plan.Pipeline, func() error, error) {
			ps := s
			ps.Planner = plan.PlannerName(planner)
			return plan.Open(ctx, ps, a)
		},
		Search: func(ctx context.Context, q string, k int) ([]serve.Entity, error) {
			hits, err := env.Search(ctx, q, k)
			out := make([]serve.Entity, len(hits))
			for i, h := range hits {
				out[i] = serve.Entity{Name: h.Name, Score: h.Score}
			}
			return out, err
		},
	}
	if err := srv.Load(ctx, b); err != nil {
		return fail(err)
	}
	return env.Close, nil
}

// version is the version string /healthz and MCP report, the first line
// of stem version.
func version() string { return stemversion.Read().String() }
