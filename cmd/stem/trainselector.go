package main

import (
	"github.com/stem-kgqa/stem/eval/runner"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/urfave/cli/v2"
)

// trainSelectorSubcommand learns the plan selector (package selection)
// from training questions asked of their KG, and calibrates its
// confidence on a held-out share of them.
func trainSelectorSubcommand() *cli.Command {
	d := runner.NewDataset()
	s := runner.PipelineSettings()
	// The selector learns among more readings than a pipeline traces
	// without one; the file records the beam (runner.SelectorBeam).
	s.Beam = runner.SelectorBeam
	enc := catalog.DefaultEncoderSettings()
	o := runner.SelectorOptions{Workers: 2}
	return &cli.Command{
		Name:  "selector",
		Usage: "learn the plan selector (which of the planner's readings to answer with, and how sure) from training questions, written as a --selector file",
		Description: "Answers the training questions with the planner and settings given (the same flags as stem eval),\n" +
			"traces every reading of each question's beam (--beam, 8 by default: the selector file records it, and\n" +
			"stem ask, eval, compare and serve trace that beam with the selector unless given --beam), labels a\n" +
			"reading right when its first answer is a gold one, and fits a logistic model over the readings'\n" +
			"features (planner score and rank, answers bound,\n" +
			"agreement between readings, T-Score, reversed edges, how the question's words name the relations, the\n" +
			"answer's type, the Triple-GNN's score with --gnn) on four questions in five; the fifth calibrates the\n" +
			"chosen reading's probability (Platt scaling) into the confidence stem ask, eval and serve report.\n" +
			"It also learns the answer set (unless --no-keep): a logistic model of each answer of the chosen reading,\n" +
			"and of the other readings, being gold, and the probability from which one is returned after the chosen\n" +
			"reading's first (chosen to maximise the training questions' mean F1; --explain shows the decision).\n" +
			"Use training questions only, never the split you measure (--ids keeps a fixed half: stem data split).\n" +
			"With --planner both (the trained pattern planner's beam merged with compose's), give a planner model\n" +
			"trained on other training questions than these (one half of the split; the selector learns on the\n" +
			"other): on the questions it learnt from, the pattern planner is never wrong, and the selector would\n" +
			"never learn when to prefer compose's reading.\n\n" +
			"Example:\n  stem train selector --format pq --questions splits/PQ-3H.train.txt --kg 3H-kb.txt --planner-model pq3.stempat --out pq3.selector\n" +
			"  stem eval --selector pq3.selector --min-confidence 0.5 --format pq --questions splits/PQ-3H.test.txt --kg 3H-kb.txt --planner-model pq3.stempat\n" +
			"  stem train planner --format pq --questions train-half-a.txt --out half-a.stempat\n" +
			"  stem train selector --planner both --planner-model half-a.stempat --format pq --questions train-half-b.txt --kg kg.stemkg --out both.selector\n" +
			"  stem eval --planner both --planner-model full.stempat --selector both.selector --format pq --questions test.txt --kg kg.stemkg",
		Flags: append(append(append([]cli.Flag{
			&cli.StringFlag{Name: "out", Destination: &o.Out, Required: true, Usage: "selector FILE to write (JSON)"},
			&cli.BoolFlag{Name: "force", Destination: &o.Force, Usage: forceFlag.Usage},
			&cli.IntFlag{Name: "workers", Value: o.Workers, Destination: &o.Workers, Usage: "questions answered at once"},
			&cli.StringFlag{Name: "rows", Destination: &o.Rows, Usage: "also write every question's readings (plan, first answers, features, label) to FILE as JSON lines, to inspect what the selector learns from"},
			&cli.BoolFlag{Name: "order-answers", Destination: &o.Answers, Usage: "also learn the order of the chosen reading's answers (by S, direction, agreement, degree, type, GNN score) instead of tracing's"},
			&cli.BoolFlag{Name: "no-keep", Destination: &o.NoKeep, Usage: "learn no answer set: return every answer the chosen reading binds, as a selector trained before the keep part does (by default the selector also learns which of the chosen reading's answers, and of the other readings', to return)"},
			&cli.Float64Flag{Name: "unanswerable-fraction", Value: o.Negatives, Destination: &o.Negatives, Usage: "share of the training questions traced over a KG without their answer edges (a hash sample salted apart from stem data unanswerable's), every reading of theirs labelled wrong, so the confidence learns what a KG that cannot answer looks like (0.2 with --confidence-on-chosen --calibrate-unanswerable 0.1 abstained on 90% of PQ-3H's and 92% of MetaQA 2-hop's lost questions at --min-confidence 0.5, the others losing under 2 Hits@1); 0: none"},
			&cli.BoolFlag{Name: "calibrate-answerable", Destination: &o.CalibrateAnswerable, Usage: "with --unanswerable-fraction: calibrate the confidence on the held-out questions that kept their answers only (the negatives still shape the weights)"},
			&cli.Float64Flag{Name: "calibrate-unanswerable", Destination: &o.UnanswerableShare, Usage: "with --unanswerable-fraction: calibrate the confidence for a KG that lacks the answers of SHARE of its questions, the held-out negatives weighted to that share (--calibrate-answerable, which never sees a KG without the answer, leaves where the threshold falls among the negatives to the few answerable questions answered wrong; 0.1 moved PQ-3H from 77% to 90% of its lost questions abstained); 0: the negatives count as drawn"},
			&cli.BoolFlag{Name: "confidence-on-chosen", Destination: &o.ChosenOnly, Usage: "fit the confidence's weights on the reading chosen for each question (is the answer given right?) instead of on every reading"},
			&cli.BoolFlag{Name: "selfsup", Destination: &o.SelfSup, Usage: "train on questions the KG itself yields (the ones stem train planner --from-kg writes) instead of --questions: a selector for a KG with no training questions"},
			&cli.IntFlag{Name: "held", Destination: &o.Held, Usage: "every HELD-th question calibrates the confidence instead of fitting the weights (0 = 5)"},
		}, flagsOf(&d)...), flagsOf(&s)...), flagsOf(&enc)...),
		Before: bind(&d, &s, &enc),
		Action: func(c *cli.Context) error {
			return runner.TrainSelector(c.Context, c.App.Writer, c.App.ErrWriter, runner.SelectorJob{Data: d, Settings: s, Encoder: enc, SelectorOptions: o})
		},
	}
}
