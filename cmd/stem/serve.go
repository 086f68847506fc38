package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/stem-kgqa/stem/assets"
	stemversion "github.com/stem-kgqa/stem/internal/version"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/backends"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/serve"
	"github.com/urfave/cli/v2"
)

// serveOptions are stem serve's own settings, beside the pipeline's.
type serveOptions struct {
	KG            string        `flag:"kg" placeholder:"FILE|URL" usage:"KG FILE (any format 'stem kg' reads) or SPARQL endpoint URL; default: the embedded demo KG"`
	KGFormat      kg.Format     `flag:"format" usage:"KG file format: auto, tsv, pipe, nt, freebase, snapshot"`
	Listen        string        `flag:"listen" placeholder:"HOST:PORT" category:"server" usage:"address to answer on; the default answers this machine only (use :8080 or 0.0.0.0:8080 for every host, with --token-env)"`
	TokenEnv      string        `flag:"token-env" placeholder:"VAR" category:"server" usage:"require 'Authorization: Bearer TOKEN' on every route but the health checks, TOKEN read from environment variable VAR (whitespace around it, as a secret file's newline, is trimmed with a warning)"`
	Timeout       time.Duration `flag:"timeout" category:"server" usage:"a question's deadline; past it the answer is 504"`
	MaxConcurrent int           `flag:"max-concurrent" min:"1" category:"server" usage:"questions answered at once, each counted until its reply is written and each call of an MCP batch counted; beyond it 503 with Retry-After"`
	MaxBody       int           `flag:"max-body" min:"256" category:"server" usage:"largest request body, in bytes (413 beyond)"`
	MaxReply      int           `flag:"max-reply" min:"4096" category:"server" usage:"largest reply, in bytes: a request whose reply would be longer is refused (422 reply_too_large) with how to narrow it (fewer entities, strategy precision, no explain, a smaller limit); the calls of an MCP batch share it"`
	Grace         time.Duration `flag:"grace" category:"server" usage:"on SIGINT/SIGTERM, how long requests in flight may take to finish"`
	MCPStdio      bool          `flag:"mcp-stdio" category:"server" usage:"serve the MCP tools over stdin/stdout instead of HTTP (for agent clients that launch tools as processes)"`
	Backends      kg.BackendSettings
}

// defaultServeOptions are stem serve's defaults.
func defaultServeOptions() serveOptions {
	return serveOptions{KGFormat: kg.FormatAuto, Listen: "127.0.0.1:8080", Timeout: serve.DefaultTimeout,
		MaxConcurrent: serve.DefaultMaxConcurrent, MaxBody: serve.DefaultMaxBody, MaxReply: serve.DefaultMaxReply, Grace: serve.DefaultGrace, Backends: backends.Default().NewSettings()}
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
			"pattern and both (pattern and compose merged) with --planner-model, llm with --llm-model. No request names a file.\n\n" +
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
	if err := assets.CheckServed(s, "serve"); err != nil {
		return err
	}
	ro := serve.RunOptions{Options: serve.Options{Timeout: o.Timeout, MaxConcurrent: o.MaxConcurrent, MaxBody: int64(o.MaxBody), MaxReply: o.MaxReply, Grace: o.Grace, Version: version()},
		Listen: o.Listen, Stdio: o.MCPStdio, In: std.in, Out: std.out, Stop: std.stop}
	if o.TokenEnv != "" {
		if ro.Token = os.Getenv(o.TokenEnv); ro.Token == "" {
			return fmt.Errorf("serve: --token-env %s: the variable is unset or empty", o.TokenEnv)
		}
	}
	cfg := assets.Config{KG: o.KG, Demo: true, Beam: s.Beam.Value(), Open: kg.OpenOptions{Format: o.KGFormat, Settings: o.Backends}, Encoder: encS, Log: log}
	return serve.Run(ctx, ro, func(ctx context.Context, srv *serve.Server) (func() error, error) {
		return assets.Load(ctx, srv, cfg, s)
	}, log)
}

// version is the version string /healthz and MCP report, the first line
// of stem version.
func version() string { return stemversion.Read().String() }
