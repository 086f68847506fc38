package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/kgvec"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/linking"
	"github.com/stem-kgqa/stem/projection/llmplan"
	"github.com/stem-kgqa/stem/projection/pattern"
	"github.com/stem-kgqa/stem/projection/zeroshot"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/train"
	"github.com/stem-kgqa/stem/tripgnn"
	"github.com/urfave/cli/v2"
)

// plannerFlags configure the planners `stem eval` and `stem ask` share.
func plannerFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "planner-model", Category: "planner", Usage: "pattern: model file written by `stem train planner`"},
		&cli.IntFlag{Name: "beam", Value: 4, Category: "planner", Usage: "candidate schema graphs per question (B)"},
		&cli.StringFlag{Name: "llm-examples", Category: "llm", Usage: "llm: training questions for few-shot examples (same formats as `stem train planner`)"},
		&cli.StringFlag{Name: "llm-examples-format", Value: "pq", Category: "llm", Usage: "llm: format of --llm-examples: pq, metaqa, webqsp-paths"},
		&cli.StringFlag{Name: "llm-examples-qtype", Category: "llm", Usage: "llm: qtype file(s) for metaqa --llm-examples"},
	}, llmFlags()...)
}

// llmFlags describe the chat server every LLM stage talks to (openChat).
func llmFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "llm-base-url", Value: "http://localhost:8000/v1", Category: "llm", Usage: "llm: API root of an OpenAI-compatible chat server (vLLM, llama.cpp, Ollama, OpenAI)"},
		&cli.StringFlag{Name: "llm-model", Category: "llm", Usage: "llm: model name"},
		&cli.StringFlag{Name: "llm-api-key-env", Value: "OPENAI_API_KEY", Category: "llm", Usage: "llm: environment variable holding the API key"},
		&cli.DurationFlag{Name: "llm-timeout", Value: 60 * time.Second, Category: "llm", Usage: "llm: time limit of one request"},
		&cli.BoolFlag{Name: "llm-no-cache", Category: "llm", Usage: "llm: do not keep replies in the on-disk cache (the cache makes reruns repeatable and free)"},
	}
}

// openChat builds the chat client the --llm-* flags describe.
func openChat(c *cli.Context) (*llm.Client, error) {
	if c.String("llm-model") == "" {
		return nil, fmt.Errorf("an LLM stage needs --llm-model NAME (and --llm-base-url of an OpenAI-compatible server)")
	}
	cfg := llm.Config{
		BaseURL:   c.String("llm-base-url"),
		Model:     c.String("llm-model"),
		APIKeyEnv: c.String("llm-api-key-env"),
		Timeout:   c.Duration("llm-timeout"),
	}
	if !c.Bool("llm-no-cache") {
		dir, err := wordvec.DefaultCacheDir()
		if err != nil {
			return nil, err
		}
		cfg.CacheDir = filepath.Join(dir, "llm")
	}
	return llm.New(cfg)
}

// openPlanner builds the projection planner --planner names, over g (which
// pattern planners use to drop paths the KG lacks and the schema planner
// enumerates). ents may be nil. close releases what it opened.
func openPlanner(c *cli.Context, name string, g *kg.Graph, enc models.Encoder) (pl projection.Planner, close func() error, err error) {
	close = func() error { return nil }
	beam := c.Int("beam")
	switch name {
	case "pattern":
		if c.String("planner-model") == "" {
			return nil, close, fmt.Errorf("--planner pattern needs --planner-model FILE (train one with `stem train planner`)")
		}
		m, err := pattern.Load(c.String("planner-model"), enc)
		if err != nil {
			return nil, close, err
		}
		p, err := pattern.New(m, enc, pattern.Config{Beam: beam, Graph: g})
		return p, close, err
	case "schema":
		if g == nil {
			return nil, close, fmt.Errorf("--planner schema needs a KG: it enumerates the relation paths leaving the question's entity")
		}
		p, err := zeroshot.New(c.Context, g, enc, zeroshot.Config{Beam: beam})
		return p, close, err
	case "llm":
		chat, err := openChat(c)
		if err != nil {
			return nil, close, err
		}
		cfg := llmplan.Config{Chat: chat, Samples: beam, Encoder: enc}
		if g != nil {
			for r := range g.NumRelations() {
				cfg.Relations = append(cfg.Relations, g.RelationName(int32(r)))
			}
		}
		if f := c.String("llm-examples"); f != "" {
			qs, err := loadPlanQuestions(c.Context, c.String("llm-examples-format"), f, c.String("llm-examples-qtype"))
			if err != nil {
				return nil, chat.Close, err
			}
			var recs []llmplan.PathRecord
			for _, q := range qs {
				if len(q.Gold) == 0 || len(q.Entities) == 0 {
					continue
				}
				r := llmplan.PathRecord{Question: q.Text, Entity: q.Entities[0], Answers: q.Answers}
				for _, s := range q.Gold[0] {
					r.Relations = append(r.Relations, s.Rel)
					r.Inverse = append(r.Inverse, s.Dir == schema.Inverse)
				}
				recs = append(recs, r)
			}
			cfg.Examples, _ = llmplan.ExamplesFromPaths(recs)
		}
		p, err := llmplan.New(c.Context, cfg)
		if err != nil {
			chat.Close()
			return nil, close, err
		}
		return p, chat.Close, nil
	}
	return nil, close, fmt.Errorf("--planner %q: want pattern, schema or llm", name)
}

// newLinker returns an entity linker over g.
func newLinker(g *kg.Graph, ents *kgvec.Entities) *linking.Linker {
	return linking.New(g, ents)
}

// openGuider loads a Triple-GNN model trained with enc and returns the guider
// that builds each question's guidance graph over g.
func openGuider(path string, g *kg.Graph, enc models.Encoder) (*plan.GNNGuider, error) {
	m, err := tripgnn.Load(path, enc.Name(), enc.Dim())
	if err != nil {
		return nil, err
	}
	return plan.NewGNNGuider(g, m, enc, train.SubgraphOptions{})
}
