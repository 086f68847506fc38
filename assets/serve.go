package assets

import (
	"context"
	"fmt"
	"slices"

	"github.com/stem-kgqa/stem/peers"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/serve"
)

// CheckServed checks settings a server will answer with: those any
// pipeline needs, and a planner that plans without a benchmark's answers.
// cmd names the command in the error.
func CheckServed(s plan.Settings, cmd string) error {
	if err := s.Check(peers.Retrievers()); err != nil {
		return err
	}
	if s.Planner == "oracle" {
		return fmt.Errorf("%s: --planner oracle plans from a benchmark's gold answers, which a served question has not; choose pattern, schema or llm", cmd)
	}
	return nil
}

// Backend is what stem serve answers with over e: the pipelines s
// describes, one per planner a request may choose (s's own first, then
// compose, schema, pattern and both with a planner model, llm with a
// chat model), and
// entity search.
func (e *Env) Backend(ctx context.Context, s plan.Settings) (serve.Backend, error) {
	a, err := e.Assets(ctx, s)
	if err != nil {
		return serve.Backend{}, err
	}
	planners := []string{string(s.Planner)}
	add := func(p string, ok bool) {
		if ok && !slices.Contains(planners, p) {
			planners = append(planners, p)
		}
	}
	add("compose", true)
	add("schema", true)
	add("pattern", s.PlannerModel != "")
	add("both", s.PlannerModel != "")
	add("llm", s.Chat.Model != "")
	return serve.Backend{
		Graph:    e.Graph,
		Planners: planners,
		Open: func(ctx context.Context, planner string) (*plan.Pipeline, func() error, error) {
			ps := s
			ps.Planner = plan.PlannerName(planner)
			return plan.Open(ctx, ps, a)
		},
		Search: func(ctx context.Context, q string, k int) ([]serve.Entity, error) {
			hits, err := e.Search(ctx, q, k)
			out := make([]serve.Entity, len(hits))
			for i, h := range hits {
				out[i] = serve.Entity{Name: h.Name, Score: h.Score}
			}
			return out, err
		},
	}, nil
}

// Load opens the environment cfg names and hands srv the pipelines s
// describes over it (Backend), so that a bad --planner-model or --gnn is
// reported at start, not to the first caller; close releases what it
// opened.
func Load(ctx context.Context, srv *serve.Server, cfg Config, s plan.Settings) (close func() error, err error) {
	e, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	b, err := e.Backend(ctx, s)
	if err == nil {
		err = srv.Load(ctx, b)
	}
	if err != nil {
		e.Close()
		return nil, err
	}
	return e.Close, nil
}
