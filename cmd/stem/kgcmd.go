package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/eval/runner"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/backends"
	"github.com/stem-kgqa/stem/progress"
	"github.com/stem-kgqa/stem/settings"
	"github.com/urfave/cli/v2"
)

var formatFlag = &cli.StringFlag{
	Name:    "format",
	Aliases: []string{"f"},
	Value:   "auto",
	Usage:   "input format: auto, tsv (head<TAB>rel<TAB>tail), pipe (head|rel|tail), nt (N-Triples), freebase (Google's dump, cleaned as the field does), snapshot; gzip and bzip2 are read as they are",
}

func kgCommand() *cli.Command {
	ks := kgFlags{backends.Default().NewSettings()}
	return &cli.Command{
		Name:  "kg",
		Usage: "build, inspect and query knowledge-graph files",
		Subcommands: []*cli.Command{
			{
				Name:      "build",
				Usage:     "convert a triple file into a binary snapshot that loads in seconds, in bounded memory whatever its size",
				ArgsUsage: "INPUT",
				Description: "Reads INPUT in any supported text format, plain or compressed (gzip, bzip2: recognised by\n" +
					"their first bytes), and writes a snapshot. Memory stays within --max-memory (plus the Go\n" +
					"runtime's tens of MB) whatever the input's size: names are interned run by run and resolved\n" +
					"through hash partitions on disk, triples are ordered by external sorts, in a scratch folder\n" +
					"inside --tmp-dir (about 1.3 times the snapshot's size, removed when the build ends, fails or\n" +
					"is interrupted). The snapshot is written to a temporary file, synced, then renamed, so a crash\n" +
					"never leaves a broken file: run the same command again. Progress shows each phase with its\n" +
					"rate and ETA.\n\n" +
					"Google's Freebase dump (freebase-rdf-latest.gz) is recognised by its first line and read as\n" +
					"the field cleans it (FilterEnglishTriplets.py's filter; machine ids named by their English\n" +
					"names, as the SPARQL backend names them): see --format freebase in docs/formats.md.\n\n" +
					"Examples:\n" +
					"  stem kg build --out metaqa.kg ../shared/data/metaqa/kb.txt\n" +
					"  stem kg build --out freebase.stemkg freebase-rdf-latest.gz\n" +
					"  stem kg build --max-memory 4GiB --tmp-dir /data/tmp --out fb.stemkg fb.tsv",
				Flags: []cli.Flag{
					formatFlag,
					&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Required: true, Usage: "snapshot file to write"},
					&cli.StringFlag{Name: "max-memory", Value: "2GiB", Usage: "memory the build may hold at once (e.g. 512MiB, 4GiB, 3000000000); resident memory stays within about this plus tens of MB"},
					&cli.StringFlag{Name: "tmp-dir", Usage: "where the scratch folder goes (default: the folder of --out)"},
					forceFlag,
					cpuProfileFlag,
				},
				Action: func(c *cli.Context) error {
					in, err := oneArg(c, "INPUT")
					if err != nil {
						return err
					}
					out := c.String("out")
					if err := atomicfile.CheckOutput("--out", out, c.Bool("force"), in); err != nil {
						return err
					}
					if err := kg.CheckOutputName("--out", out, kg.FormatSnapshot); err != nil {
						return fmt.Errorf("kg build: %w (a snapshot: .kg or .stemkg)", err)
					}
					f, err := kg.ParseFormat(c.String("format"))
					if err != nil {
						return err
					}
					mem, err := settings.ParseBytes(c.String("max-memory"))
					if err != nil {
						return fmt.Errorf("--max-memory: %w", err)
					}
					if mem < kg.MinBuildMemory {
						return fmt.Errorf("--max-memory %s: want at least %d MiB", c.String("max-memory"), kg.MinBuildMemory>>20)
					}
					// The Go runtime collects garbage before the heap passes
					// the bound; the build sizes its buffers to stay within it.
					defer debug.SetMemoryLimit(debug.SetMemoryLimit(mem + 64<<20))
					stop, err := runner.StartCPUProfile(c.String("cpuprofile"))
					if err != nil {
						return err
					}
					defer stop()
					start := time.Now()
					bars := progress.NewPhases(c.App.ErrWriter)
					st, err := kg.BuildSnapshot(c.Context, in, out, kg.BuildOptions{
						Format: f, MaxMemory: mem, TempDir: c.String("tmp-dir"),
						Progress: func(p kg.BuildProgress) { bars.Update(p.Phase, p.Done, p.Total) },
					})
					bars.Finish()
					if err != nil {
						return err
					}
					st.WriteText(c.App.Writer, out, time.Since(start), runner.PeakMemory())
					return nil
				},
			},
			{
				Name:      "mask",
				Usage:     "write a KG with its relation names masked to opaque ids (a setting where relation text alone cannot tell edges apart)",
				ArgsUsage: "KG",
				Description: "Reads KG in any supported format and writes it to --out as a tab-separated triple file with every\n" +
					"relation name replaced by \"r\" and 8 hex digits: the low 32 bits of the FNV-1a 64-bit hash of the\n" +
					"name (children -> r8c3cf2b2). The id depends on the name alone. Questions keep their gold paths'\n" +
					"real relation names, so the oracle planner's schema graphs name relations the KG does not.\n\n" +
					"Example: stem kg mask --out 3H-masked.txt ../shared/data/pathquestion/3H-kb.txt",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "in-format", Value: "auto", Usage: "input format: auto, tsv, pipe, nt, freebase, snapshot"},
					&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Required: true, Usage: "triple file to write"},
					forceFlag,
				},
				Action: func(c *cli.Context) error {
					in, err := oneArg(c, "KG")
					if err != nil {
						return err
					}
					out := c.String("out")
					if err := atomicfile.CheckOutput("--out", out, c.Bool("force"), in); err != nil {
						return err
					}
					if err := kg.CheckOutputName("--out", out, kg.FormatTSV); err != nil {
						return fmt.Errorf("kg mask: %w (TSV: .tsv or .txt)", err)
					}
					f, err := kg.ParseFormat(c.String("in-format"))
					if err != nil {
						return err
					}
					g, err := kg.Load(c.Context, in, f)
					if err != nil {
						return err
					}
					var n int
					if err := atomicfile.Write(out, 0o644, func(w io.Writer) error {
						n, err = kg.WriteMaskedTSV(c.Context, w, g)
						return err
					}); err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "wrote %s: %d triples, %d relations masked\n", out, n, g.NumRelations())
					return nil
				},
			},
			{
				Name:      "export",
				Usage:     "write a KG as N-Triples, for a SPARQL store such as Virtuoso (scripts/virtuoso load)",
				ArgsUsage: "KG",
				Description: "Reads KG in any supported format and streams it as N-Triples to --out (written\n" +
					"atomically) or standard output. Names become IRIs under --base-iri with the\n" +
					"characters an IRI local name cannot hold percent-encoded (\"AC/DC\" is\n" +
					"ns:AC%2FDC); names that are IRIs already are kept; every entity also gets\n" +
					"<e> <" + kg.NamePredicate + "> \"name\"@en. stem kg build and every command that\n" +
					"reads N-Triples read the file back as the same KG: the same names (the labels) and\n" +
					"relations (their IRIs' local names, percent-decoded).\n\n" +
					"--format freebase writes the shape of Google's Freebase dump instead (four tab-separated\n" +
					"fields a line, each named entity a machine id of its own, m.0s..., named by\n" +
					"type.object.name; CVTs keep their ids), which --format freebase reads back as the same\n" +
					"KG, and a SPARQL store serves as it serves Freebase; a name such a dump cannot carry\n" +
					"(one starting with '/', blank, not UTF-8) is an error. --base-iri does not apply.\n\n" +
					"Example: stem kg export --out 3H.nt ../shared/data/pathquestion/3H-kb.txt",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "format", Value: "nt", Usage: "output format: nt (N-Triples) or freebase (N-Triples in the shape of Freebase's dump)"},
					&cli.StringFlag{Name: "in-format", Value: "auto", Usage: "input format: auto, tsv, pipe, nt, freebase, snapshot (what --format means to the other kg commands)"},
					&cli.StringFlag{Name: "base-iri", Value: kg.FreebaseNS, Usage: "namespace the names are put under"},
					&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "N-Triples file to write (default: standard output)"},
					forceFlag,
				},
				Action: func(c *cli.Context) error {
					in, err := oneArg(c, "KG")
					if err != nil {
						return err
					}
					format := c.String("format")
					if format != "nt" && format != "freebase" {
						return fmt.Errorf("kg export: --format %q: nt (N-Triples) or freebase (Freebase's dump shape) is written", format)
					}
					write := func(ctx context.Context, w io.Writer, g kg.Reader) (int, error) {
						if format == "freebase" {
							return kg.WriteFreebase(ctx, w, g)
						}
						return kg.WriteNTriples(ctx, w, g, c.String("base-iri"))
					}
					if base := c.String("base-iri"); !kg.IsIRI(base) {
						return fmt.Errorf("kg export: --base-iri %q is not an absolute IRI (e.g. %s)", base, kg.FreebaseNS)
					}
					out := c.String("out")
					if out != "" {
						if err := atomicfile.CheckOutput("--out", out, c.Bool("force"), in); err != nil {
							return err
						}
						if err := kg.CheckOutputName("--out", out, kg.FormatNTriples); err != nil {
							return fmt.Errorf("kg export: %w (.nt)", err)
						}
					}
					f, err := kg.ParseFormat(c.String("in-format"))
					if err != nil {
						return err
					}
					start := time.Now()
					g, err := kg.Load(c.Context, in, f)
					if err != nil {
						return err
					}
					if out == "" {
						_, err := write(c.Context, c.App.Writer, g)
						return err
					}
					var n int
					if err := atomicfile.Write(out, 0o644, func(w io.Writer) error {
						n, err = write(c.Context, w, g)
						return err
					}); err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "wrote %s: %d lines (%d triples, %d entity names) in %s\n",
						out, n, g.NumTriples(), g.NumEntities(), time.Since(start).Round(time.Millisecond))
					return nil
				},
			},
			{
				Name:      "stats",
				Usage:     "print entity, relation and triple counts, the degree distribution and the top relations",
				ArgsUsage: "FILE|URL",
				Description: "FILE is any KG stem reads; URL a SPARQL endpoint, counted by the engine\n" +
					"(degrees are then left out: they would scan every entity).\n\n" +
					"Examples:\n  stem kg stats ../shared/data/metaqa/kb.txt\n  stem kg stats --kg-graph http://stem.test/pq3h http://127.0.0.1:8890/sparql",
				Flags:  append([]cli.Flag{formatFlag, &cli.IntFlag{Name: "top", Value: 10, Usage: "how many of the most frequent relations to list"}}, flagsOf(&ks)...),
				Before: before(guard(map[string]float64{"top": 0}), bind(&ks)),
				Action: func(c *cli.Context) error {
					in, err := oneArg(c, "FILE or URL")
					if err != nil {
						return err
					}
					g, err := ks.open(c.Context, in, c.String("format"))
					if err != nil {
						return err
					}
					st, err := kg.Describe(c.Context, g, c.Int("top"))
					if err != nil {
						return err
					}
					st.WriteText(c.App.Writer, in)
					return nil
				},
			},
			{
				Name:      "neighbours",
				Aliases:   []string{"neighbors"},
				Usage:     "list the edges around an entity (exact name, or a name matched ignoring case and punctuation)",
				ArgsUsage: "FILE|URL ENTITY",
				Flags: append([]cli.Flag{
					formatFlag,
					&cli.IntFlag{Name: "limit", Value: 20, Usage: "edges to show per relation and direction (0 = all)"},
				}, flagsOf(&ks)...),
				Before: before(guard(map[string]float64{"limit": 0}), bind(&ks)),
				Action: func(c *cli.Context) error {
					if c.NArg() != 2 {
						return fmt.Errorf("kg neighbours: want FILE and ENTITY, got %d arguments (see stem kg neighbours --help)", c.NArg())
					}
					g, err := ks.open(c.Context, c.Args().Get(0), c.String("format"))
					if err != nil {
						return err
					}
					name := c.Args().Get(1)
					ids := kg.Lookup(g, name)
					if len(ids) == 0 {
						return fmt.Errorf("entity %q not found in %s (names are matched exactly, then ignoring case, '_' and punctuation)", name, c.Args().Get(0))
					}
					for _, id := range ids {
						kg.WriteNeighbourhood(c.App.Writer, g, id, c.Int("limit"))
					}
					return kg.Err(g)
				},
			},
			kgSynthCommand(),
		},
	}
}

// oneArg returns the single positional argument a command takes.
func oneArg(c *cli.Context, what string) (string, error) {
	if c.NArg() != 1 {
		return "", fmt.Errorf("%s: want one %s argument, got %d (see stem %s --help)", c.Command.FullName(), what, c.NArg(), c.Command.FullName())
	}
	return c.Args().First(), nil
}
