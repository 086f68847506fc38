package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/kg"
	"github.com/urfave/cli/v2"
)

// dataUnionCommand writes the shared KG of an own-graph dataset: the union
// of its questions' graphs (benchmark.Union).
func dataUnionCommand() *cli.Command {
	return &cli.Command{
		Name:  "union",
		Usage: "write the union of a dataset's per-question graphs as one shared KG file",
		Description: "WebQSP-mini and RoG rows bring each question's own graph: the few paths another retriever kept\n" +
			"for it, chosen because they lead to its answers. Their union is one KG that every question shares,\n" +
			"where a topic entity's neighbourhood holds the other questions' relations too, as Freebase does.\n" +
			"Give it back as --kg to stem eval, compare, eval-plans, train gnn or serve and every question is\n" +
			"asked of it instead of its own graph (the shared setting; see docs/benchmarks.md, \"WebQSP over one KG\").\n\n" +
			"The output's extension says what is written: .tsv or .txt a tab-separated triple file, .nt\n" +
			"N-Triples under --base-iri (for a SPARQL store: scripts/virtuoso load), .stemkg a snapshot.\n\n" +
			"Example:\n  D=../shared/data/webqsp\n" +
			"  stem data union --format webqsp-mini --questions $D/gnnrag_sbert_test.jsonl,$D/gnnrag_lmsr_test.jsonl \\\n" +
			"        --gold-paths $D/rog_paths_test.jsonl --out webqsp-union.tsv",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Required: true, Usage: "dataset format whose questions bring their own graphs: webqsp-mini, rog"},
			&cli.StringFlag{Name: "questions", Required: true, Usage: "question file(s), comma-separated"},
			&cli.StringFlag{Name: "gold-paths", Usage: "webqsp-mini, rog: rog_paths_*.jsonl with the gold relation paths"},
			&cli.StringFlag{Name: "base-iri", Value: kg.FreebaseNS, Usage: "with an .nt output: the namespace names are put under"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Required: true, Usage: "KG file to write: .tsv, .txt, .nt or .stemkg"},
			forceFlag,
		},
		Action: runDataUnion,
	}
}

func runDataUnion(c *cli.Context) error {
	out := c.String("out")
	if err := kg.CheckWriteName(out); err != nil {
		return fmt.Errorf("--out %w", err)
	}
	if strings.EqualFold(filepath.Ext(out), ".nt") && !kg.IsIRI(c.String("base-iri")) {
		return fmt.Errorf("--base-iri %q is not an absolute IRI (e.g. %s)", c.String("base-iri"), kg.FreebaseNS)
	}
	if err := atomicfile.CheckOutput("--out", out, c.Bool("force"), inputs(c, "questions", "gold-paths")...); err != nil {
		return err
	}
	f, err := benchmark.LookupFormat(c.String("format"))
	if err != nil {
		return err
	}
	if f.SharedKG {
		return fmt.Errorf("--format %s: its questions share one KG already (--kg); union is for formats whose questions bring their own graphs", f.Name)
	}
	qs, err := f.LoadQuestions(c.Context, benchmark.Source{Format: f.Name, Questions: splitList(c.String("questions")), GoldPaths: c.String("gold-paths")})
	if err != nil {
		return err
	}
	g, err := benchmark.Union(c.Context, qs)
	if err != nil {
		return err
	}
	if g.NumTriples() == 0 {
		return fmt.Errorf("the %d questions of %s bring no triples: nothing to write", len(qs), c.String("questions"))
	}
	if err := kg.WriteFile(c.Context, out, g, c.String("base-iri")); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "wrote %s: %d entities, %d relations, %d distinct triples, the union of %d questions' graphs\n",
		out, g.NumEntities(), g.NumRelations(), g.NumTriples(), len(qs))
	return nil
}
