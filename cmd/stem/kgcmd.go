package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/kg"
	"github.com/urfave/cli/v2"
)

var formatFlag = &cli.StringFlag{
	Name:    "format",
	Aliases: []string{"f"},
	Value:   "auto",
	Usage:   "input format: auto, tsv (head<TAB>rel<TAB>tail), pipe (head|rel|tail), nt (N-Triples), snapshot",
}

func kgCommand() *cli.Command {
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
					start := time.Now()
					g, err := loadKG(c, in)
					if err != nil {
						return err
					}
					if err := kg.WriteSnapshot(c.String("out"), g); err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "wrote %s: %d entities, %d relations, %d triples (%d duplicate lines dropped) in %s\n",
						c.String("out"), g.NumEntities(), g.NumRelations(), g.NumTriples(), g.Duplicates(), time.Since(start).Round(time.Millisecond))
					return nil
				},
			},
			{
				Name:      "stats",
				Usage:     "print entity, relation and triple counts, the degree distribution and the top relations",
				ArgsUsage: "FILE",
				Flags: []cli.Flag{
					formatFlag,
					&cli.IntFlag{Name: "top", Value: 10, Usage: "how many of the most frequent relations to list"},
				},
				Before: guard(map[string]float64{"top": 0}),
				Action: func(c *cli.Context) error {
					in, err := oneArg(c, "FILE")
					if err != nil {
						return err
					}
					g, err := loadKG(c, in)
					if err != nil {
						return err
					}
					printStats(c.App.Writer, in, g, c.Int("top"))
					return nil
				},
			},
			{
				Name:      "neighbours",
				Aliases:   []string{"neighbors"},
				Usage:     "list the edges around an entity (exact name, or a name matched ignoring case and punctuation)",
				ArgsUsage: "FILE ENTITY",
				Flags: []cli.Flag{
					formatFlag,
					&cli.IntFlag{Name: "limit", Value: 20, Usage: "edges to show per relation and direction (0 = all)"},
				},
				Before: guard(map[string]float64{"limit": 0}),
				Action: func(c *cli.Context) error {
					if c.NArg() != 2 {
						return fmt.Errorf("kg neighbours: want FILE and ENTITY, got %d arguments (see stem kg neighbours --help)", c.NArg())
					}
					g, err := loadKG(c, c.Args().Get(0))
					if err != nil {
						return err
					}
					name := c.Args().Get(1)
					ids := lookupEntity(g, name)
					if len(ids) == 0 {
						return fmt.Errorf("entity %q not found in %s (names are matched exactly, then ignoring case, '_' and punctuation)", name, c.Args().Get(0))
					}
					for _, id := range ids {
						printNeighbourhood(c.App.Writer, g, id, c.Int("limit"))
					}
					return nil
				},
			},
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

// loadKG loads path in the format named by the --format flag.
func loadKG(c *cli.Context, path string) (*kg.Graph, error) {
	f, err := kg.ParseFormat(c.String("format"))
	if err != nil {
		return nil, err
	}
	return kg.Load(c.Context, path, f)
}

// lookupEntity finds an entity by exact name, else by normalised name.
func lookupEntity(g *kg.Graph, name string) []int32 {
	if id, ok := g.Entity(name); ok {
		return []int32{id}
	}
	return g.EntitiesByNorm(name)
}

func printStats(w io.Writer, name string, g *kg.Graph, top int) {
	s := g.Stats(top)
	fmt.Fprintf(w, "%s\n", name)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  entities\t%d\n", s.Entities)
	fmt.Fprintf(tw, "  relations\t%d\n", s.Relations)
	fmt.Fprintf(tw, "  triples\t%d\n", s.Triples)
	if s.Duplicates > 0 {
		fmt.Fprintf(tw, "  duplicate lines dropped\t%d\n", s.Duplicates)
	}
	fmt.Fprintf(tw, "  degree max / p50 / p99\t%d / %v / %v\n", s.MaxDegree, s.P50Degree, s.P99Degree)
	tw.Flush()
	if len(s.TopRelations) > 0 {
		fmt.Fprintf(w, "  top relations:\n")
		width := len(fmt.Sprint(s.TopRelations[0].Count))
		for _, rc := range s.TopRelations {
			fmt.Fprintf(w, "    %*d  %s\n", width, rc.Count, rc.Name)
		}
	}
}

// printNeighbourhood prints an entity's edges grouped by relation and
// direction, so hub nodes stay readable.
func printNeighbourhood(w io.Writer, g *kg.Graph, e int32, limit int) {
	type group struct {
		rel      int32
		incoming bool
		others   []string
	}
	groups := map[[2]int32]*group{}
	var order [][2]int32
	add := func(rel int32, incoming bool, other int32) {
		dir := int32(0)
		if incoming {
			dir = 1
		}
		k := [2]int32{rel, dir}
		gr, ok := groups[k]
		if !ok {
			gr = &group{rel: rel, incoming: incoming}
			groups[k] = gr
			order = append(order, k)
		}
		gr.others = append(gr.others, g.EntityName(other))
	}
	for _, t := range g.Out(e) {
		tr := g.Triple(t)
		add(tr.Rel, false, tr.Tail)
	}
	for _, t := range g.In(e) {
		tr := g.Triple(t)
		add(tr.Rel, true, tr.Head)
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := groups[order[i]], groups[order[j]]
		if a.incoming != b.incoming {
			return !a.incoming
		}
		return g.RelationName(a.rel) < g.RelationName(b.rel)
	})
	name := g.EntityName(e)
	fmt.Fprintf(w, "%s  (%d out, %d in)\n", name, len(g.Out(e)), len(g.In(e)))
	for _, k := range order {
		gr := groups[k]
		shown := gr.others
		more := 0
		if limit > 0 && len(shown) > limit {
			more = len(shown) - limit
			shown = shown[:limit]
		}
		list := strings.Join(shown, ", ")
		if more > 0 {
			list += fmt.Sprintf(", ... (%d more)", more)
		}
		if gr.incoming {
			fmt.Fprintf(w, "  <- %s <- %s\n", g.RelationName(gr.rel), list)
		} else {
			fmt.Fprintf(w, "  -> %s -> %s\n", g.RelationName(gr.rel), list)
		}
	}
}
