package main

import (
	"fmt"
	"time"

	"github.com/stem-kgqa/stem/assets"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kg/backends"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/urfave/cli/v2"
)

func encodeCommand() *cli.Command {
	encS := catalog.DefaultEncoderSettings()
	return &cli.Command{
		Name:      "encode",
		Usage:     "encode texts and print their pairwise cosine similarities (to compare encoders)",
		ArgsUsage: "TEXT TEXT...",
		Description: "Example: stem encode 'directed by' 'film director' 'place of birth'\n" +
			"         stem encode --encoder onnx --model-dir ./minilm 'who directed inception'",
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "vectors-out", Usage: "also print each vector"},
		}, flagsOf(&encS)...),
		Before: bind(&encS),
		Action: func(c *cli.Context) error {
			texts := c.Args().Slice()
			if len(texts) == 0 {
				return fmt.Errorf("encode: give at least one TEXT")
			}
			enc, closeEnc, err := catalog.OpenEncoder(c.Context, encS, c.App.ErrWriter)
			if err != nil {
				return err
			}
			defer closeEnc()
			start := time.Now()
			vecs, err := models.EncodeAll(c.Context, enc, texts)
			if err != nil {
				return err
			}
			d := enc.Dim()
			w := c.App.Writer
			fmt.Fprintf(w, "encoder %s, %d dims, %d texts in %s\n", enc.Name(), d, len(texts), time.Since(start).Round(time.Microsecond))
			return models.WriteSimilarities(w, texts, vecs, d, c.Bool("vectors-out"))
		},
	}
}

func searchCommand() *cli.Command {
	encS := catalog.DefaultEncoderSettings()
	ks := kgFlags{backends.Default().NewSettings()}
	return &cli.Command{
		Name:      "search",
		Usage:     "find the KG entities nearest to each query by the encoder (exact cosine search)",
		ArgsUsage: "QUERY...",
		Description: "Encodes every entity of the KG once and keeps the index in the cache directory\n" +
			"($STEM_CACHE_DIR or ~/.cache/stem, entities/<hash>.vx, named by the KG file's content and the\n" +
			"encoder), so later searches start at once; nothing is written beside the KG.\n\n" +
			"Over a SPARQL endpoint (--kg URL) no entity is encoded ahead: the candidates are the entities named\n" +
			"as the query and those the engine's text index finds by its words (Virtuoso's bif:contains, see\n" +
			"--kg-text), ranked by the encoder's similarity of the query and the name or alias that matched.\n\n" +
			"Examples:\n  stem search --kg metaqa.kg 'tom hanks' 'the dark knight'\n" +
			"  stem search --kg http://localhost:8890/sparql 'barack obama'",
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "kg", Required: true, Usage: "KG `FILE` (any format 'stem kg' reads), or a SPARQL endpoint URL"},
			formatFlag,
			&cli.IntFlag{Name: "k", Value: 10, Usage: "how many entities to list per query"},
		}, flagsOf(&encS)...), flagsOf(&ks)...),
		Before: before(guard(map[string]float64{"k": 1}), bind(&encS), bind(&ks)),
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return fmt.Errorf("search: give at least one QUERY")
			}
			f, err := kg.ParseFormat(c.String("format"))
			if err != nil {
				return err
			}
			env, err := assets.Open(c.Context, assets.Config{KG: c.String("kg"), Open: kg.OpenOptions{Format: f, Settings: ks.Backends}, Encoder: encS, Log: c.App.ErrWriter})
			if err != nil {
				return err
			}
			defer env.Close()
			w := c.App.Writer
			for _, q := range c.Args().Slice() {
				start := time.Now()
				hits, err := env.Search(c.Context, q, c.Int("k"))
				if err != nil {
					return err
				}
				fmt.Fprintf(w, "%s  (%s)\n", q, time.Since(start).Round(time.Microsecond))
				for _, h := range hits {
					fmt.Fprintf(w, "  %.3f  %s\n", h.Score, h.Name)
				}
			}
			return nil
		},
	}
}
