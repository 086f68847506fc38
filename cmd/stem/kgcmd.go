package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/eval/runner"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/backends"
	"github.com/stem-kgqa/stem/progress"
	"github.com/urfave/cli/v2"
)

var formatFlag = &cli.StringFlag{
	Name:    "format",
	Aliases: []string{"f"},
	Value:   "auto",
	Usage:   "input format: auto, tsv (head<TAB>rel<TAB>tail), pipe (head|rel|tail), nt (N-Triples), snapshot",
}

func kgCommand() *cli.Command {
	ks := kgFlags{backends.Default().NewSettings()}
	return &cli.Command{
		Name:  "kg",
		Usage: "build, inspect and query knowledge-graph files",
		Subcommands: []*cli.Command{
			{
				Name:      "build",
				Usage:     "convert a triple file into a binary snapshot that loads in milliseconds",
				ArgsUsage: "INPUT",
				Description: "Reads INPUT in any supported text format and writes a snapshot (written to a\n" +
					"temporary file, synced, then renamed, so a crash never leaves a broken file).\n\n" +
					"Example: stem kg build --out metaqa.kg ../shared/data/metaqa/kb.txt",
				Flags: []cli.Flag{
					formatFlag,
					&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Required: true, Usage: "snapshot file to write"},
					forceFlag,
				},
				Action: func(c *cli.Context) error {
					in, err := oneArg(c, "INPUT")
					if err != nil {
						return err
					}
					if err := atomicfile.CheckOutput("--out", c.String("out"), c.Bool("force"), in); err != nil {
						return err
					}
					if err := kg.CheckOutputName("--out", c.String("out"), kg.FormatSnapshot); err != nil {
						return fmt.Errorf("kg build: %w (a snapshot: .kg or .stemkg)", err)
					}
					start := time.Now()
					g, err := buildKG(c, in)
					if err != nil {
						return err
					}
					if err := kg.WriteSnapshot(c.String("out"), g); err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "wrote %s: %d entities, %d relations, %d triples (%d duplicate lines dropped) in %s, peak memory %s\n",
						c.String("out"), g.NumEntities(), g.NumRelations(), g.NumTriples(), g.Duplicates(), time.Since(start).Round(time.Millisecond), runner.PeakMemory())
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
					&cli.StringFlag{Name: "in-format", Value: "auto", Usage: "input format: auto, tsv, pipe, nt, snapshot"},
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
					"<e> <" + kg.NamePredicate + "> \"name\"@en.\n\n" +
					"Example: stem kg export --out 3H.nt ../shared/data/pathquestion/3H-kb.txt",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "format", Value: "nt", Usage: "output format: nt (N-Triples, the only one so far)"},
					&cli.StringFlag{Name: "in-format", Value: "auto", Usage: "input format: auto, tsv, pipe, nt, snapshot (what --format means to the other kg commands)"},
					&cli.StringFlag{Name: "base-iri", Value: kg.FreebaseNS, Usage: "namespace the names are put under"},
					&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "N-Triples file to write (default: standard output)"},
					forceFlag,
				},
				Action: func(c *cli.Context) error {
					in, err := oneArg(c, "KG")
					if err != nil {
						return err
					}
					if f := c.String("format"); f != "nt" {
						return fmt.Errorf("kg export: --format %q: only nt (N-Triples) is written", f)
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
						_, err := kg.WriteNTriples(c.Context, c.App.Writer, g, c.String("base-iri"))
						return err
					}
					var n int
					if err := atomicfile.Write(out, 0o644, func(w io.Writer) error {
						n, err = kg.WriteNTriples(c.Context, w, g, c.String("base-iri"))
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
					g, err := openKG(c, ks, in)
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
					g, err := openKG(c, ks, c.Args().Get(0))
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

// openKG opens spec, a file in the format the --format flag names or a
// URL.
func openKG(c *cli.Context, ks kgFlags, spec string) (kg.Reader, error) {
	f, err := kg.ParseFormat(c.String("format"))
	if err != nil {
		return nil, err
	}
	return ks.open(c.Context, spec, f)
}

// buildKG streams the input of `stem kg build`, drawing a progress bar of
// the bytes read on stderr: a 10M-triple file takes a while, and the
// loaders never hold the file, only the distinct names and the columns.
func buildKG(c *cli.Context, path string) (*kg.Graph, error) {
	f, err := kg.ParseFormat(c.String("format"))
	if err != nil {
		return nil, err
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load KG: %w", err)
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return nil, fmt.Errorf("load KG %s: %w", path, err)
	}
	bar := progress.New(c.App.ErrWriter, "read "+filepath.Base(path), st.Size())
	g, err := kg.LoadReader(c.Context, &progressReader{r: file, bar: bar}, path, f)
	bar.Finish()
	return g, err
}

// progressReader counts the bytes read through it on a progress bar.
type progressReader struct {
	r   io.Reader
	bar *progress.Bar
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.bar.Add(int64(n))
	return n, err
}
