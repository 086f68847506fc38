package main

import (
	"fmt"

	"github.com/stem-kgqa/stem/eval/runner"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/urfave/cli/v2"
)

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
	d := runner.NewDataset()
	b := runner.DefaultBenchOptions()
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
			"Formats:\n" + runner.FormatHelp() + "\n" +
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
			return runner.Bench(c.Context, c.App.Writer, c.App.ErrWriter, d, b, s, enc, c.String("cpuprofile"), version())
		},
	}
}
