package runner

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
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/pattern"
)

// demoQuestions are answered by the quick start: one, two and three hops,
// and a question with several answers.
var demoQuestions = []string{
	"who directed inception ?",
	"who starred in inception ?",
	"where was the director of the dark knight born ?",
	"in which country was the director of inception born ?",
}

// DemoOptions are stem demo's: the entity whose neighbourhood is shown, the
// edges shown per relation and direction, and whether PathQuestion's
// questions are answered too when the benchmark data is present.
type DemoOptions struct {
	Entity string
	Limit  int
	Shared bool
}

// Demo runs the quick start: the embedded demo KG's statistics, its
// questions answered with their evidence, PathQuestion's (with o.Shared),
// and an entity's neighbourhood.
func Demo(ctx context.Context, w, log io.Writer, o DemoOptions, encS catalog.EncoderSettings) error {
	g, err := kg.ReadTSV(demo.KG(), demo.KGName)
	if err != nil {
		return err
	}
	g.Stats(5).WriteText(w, demo.KGName+" (embedded demo KG)")
	fmt.Fprintln(w)
	enc, closeEnc, err := catalog.OpenEncoder(ctx, encS, log)
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
	if o.Shared {
		if err := demoPathQuestion(ctx, w, log, enc); err != nil {
			return err
		}
	}
	return lookup(ctx, w, g, ents, o)
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

// lookup resolves o.Entity to entities (exact, normalised, then nearest
// by the encoder) and prints their neighbourhoods, up to o.Limit edges.
func lookup(ctx context.Context, w io.Writer, g *kg.Graph, ents *kgvec.Entities, o DemoOptions) error {
	name, limit := o.Entity, o.Limit
	start := time.Now()
	ids := kg.Lookup(g, name)
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
