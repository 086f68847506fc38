package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/eval"
	"github.com/stem-kgqa/stem/eval/planeval"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/peers/graphraft"
	"github.com/stem-kgqa/stem/peers/signals"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection/pattern"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/settings"
	"github.com/stem-kgqa/stem/train"
	"github.com/stem-kgqa/stem/train/selfsup"
	"github.com/stem-kgqa/stem/tripgnn"
)

// ThetaOptions are stem train theta's own: the thresholds tried
// (comma-separated, "" for eval.DefaultThetas), the --config file written,
// and the questions answered at once.
type ThetaOptions struct {
	Thetas  string
	Out     string
	Force   bool
	Workers int
}

// Theta calibrates the Breadth threshold theta for an encoder on d's
// questions (eval.SweepTheta), prints the curve to w and writes the best
// theta with the encoder's settings as a --config file.
func Theta(ctx context.Context, w, log io.Writer, d Dataset, s plan.Settings, enc catalog.EncoderSettings, o ThetaOptions) error {
	grid := eval.DefaultThetas()
	if o.Thetas != "" {
		grid = grid[:0]
		for _, p := range settings.SplitList(o.Thetas) {
			v, err := strconv.ParseFloat(p, 32)
			if err != nil || v < -1 || v > 2 {
				return fmt.Errorf("--thetas: %q is not a threshold between -1 and 2", p)
			}
			grid = append(grid, float32(v))
		}
	}
	if err := d.Source().Check(); err != nil {
		return err
	}
	ins := append(append([]string{d.KG, d.GoldPaths, d.IDs, s.PlannerModel}, d.Questions...), d.QType...)
	if err := atomicfile.CheckOutput("--out", o.Out, o.Force, ins...); err != nil {
		return err
	}
	data, env, err := d.Open(ctx, enc, log)
	if err != nil {
		return err
	}
	defer env.Close()
	s.Tracing.SoftSymbols = true
	open := func(ctx context.Context, th float32) (eval.Answerer, func() error, error) {
		st := s
		st.Tracing.Theta = th
		p, closeP, err := env.Pipeline(ctx, st)
		if err != nil {
			return nil, closeP, err
		}
		return eval.Pipeline{Pipeline: p}, closeP, nil
	}
	points, best, err := eval.SweepTheta(ctx, data.Questions, grid, open, eval.Options{Graph: data.Graph, KeepGoing: true, Workers: max(1, o.Workers), Progress: log})
	if err != nil {
		return err
	}
	if err := eval.WriteThetaTable(w, points, best); err != nil {
		return err
	}
	return writeThetaConfig(o.Out, points[best].Theta, enc, w)
}

// writeThetaConfig writes theta and the encoder settings it was measured
// with as a --config file: loaded by another command, it sets both, so
// the threshold is never used with an encoder it was not calibrated for.
func writeThetaConfig(path string, theta float32, enc catalog.EncoderSettings, w io.Writer) error {
	cfg := map[string]any{"theta": json.Number(strconv.FormatFloat(float64(theta), 'f', 2, 32))}
	def := catalog.DefaultEncoderSettings()
	fields, err := settings.Fields(&enc)
	if err != nil {
		return err
	}
	defFields, err := settings.Fields(&def)
	if err != nil {
		return err
	}
	defaults := settings.Values(defFields)
	for k, v := range settings.Values(fields) {
		// The encoder's identity: its name always, the rest where it is
		// not the default.
		if k == "encoder" || v != defaults[k] && (k == "vectors" || k == "model-dir" || k == "pooling" || k == "model" || k == "base-url") {
			cfg[k] = v
		}
	}
	if err := atomicfile.Write(path, 0o644, func(f io.Writer) error {
		e := json.NewEncoder(f)
		e.SetIndent("", "  ")
		return e.Encode(cfg)
	}); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "wrote %s: theta %.2f for encoder %s (use it with --config %s)\n", path, theta, strings.TrimSpace(string(enc.Encoder)), path)
	return err
}

// PlannerOptions are stem train planner's: the pattern model's training
// options, where it is written, and (for training from a KG alone) the
// synthesis's.
type PlannerOptions struct {
	Pattern pattern.Options
	Out     string
	// KG, with Graph, names a KG whose relations the gold paths are
	// checked against (a warning per relation it lacks).
	KG    string
	Graph *kg.Graph
	// FromKG trains from the KG alone (selfsup; Pattern is its model's).
	FromKG selfsup.Options
}

// TrainPlanner trains the pattern planner on qs and writes it to o.Out.
func TrainPlanner(ctx context.Context, log io.Writer, qs []planeval.Question, encS catalog.EncoderSettings, o PlannerOptions) error {
	if g := o.Graph; g != nil {
		missing := map[string]int{}
		for _, q := range qs {
			for _, path := range q.Gold {
				for _, s := range path {
					if _, ok := g.Relation(s.Rel); !ok {
						missing[s.Rel]++
					}
				}
			}
		}
		for r, n := range missing {
			fmt.Fprintf(log, "warning: relation %q (%d gold steps) is not in %s\n", r, n, o.KG)
		}
	}
	enc, closeEnc, err := catalog.OpenEncoder(ctx, encS, log)
	if err != nil {
		return err
	}
	defer closeEnc()
	exs := make([]pattern.Example, len(qs))
	for i, q := range qs {
		exs[i] = q.Example()
	}
	m, err := pattern.Train(ctx, enc, exs, o.Pattern)
	if err != nil {
		return err
	}
	if err := m.Save(o.Out); err != nil {
		return err
	}
	fmt.Fprintf(log, "trained on %d questions (%d distinct masked texts, %d relation paths) with %s; wrote %s\n",
		m.Questions(), m.Examples(), m.NumPaths(), m.Encoder(), o.Out)
	return nil
}

// TrainFromKG trains a planner from the KG g alone (package selfsup) and
// writes it to o.Out.
func TrainFromKG(ctx context.Context, log io.Writer, g *kg.Graph, encS catalog.EncoderSettings, o PlannerOptions) error {
	enc, closeEnc, err := catalog.OpenEncoder(ctx, encS, log)
	if err != nil {
		return err
	}
	defer closeEnc()
	so := o.FromKG
	if so.Lexicon, err = catalog.OpenLexicon(ctx, encS, log); err != nil {
		return err
	}
	so.Pattern = o.Pattern
	m, st, err := selfsup.Train(ctx, g, enc, so, log)
	if err != nil {
		return err
	}
	if err := m.Save(o.Out); err != nil {
		return err
	}
	maxAnswers := so.MaxAnswers
	if maxAnswers == 0 {
		maxAnswers = selfsup.DefaultMaxAnswers
	}
	fmt.Fprintf(log, "synthesized %d questions for %d relation paths (%d starts drawn over %d relations; %d walks left out for reaching more than %d entities)\n",
		st.Examples, st.Paths, st.Starts, st.Relations, st.TooManyAnswers, maxAnswers)
	fmt.Fprintf(log, "trained on them (%d distinct masked texts) with %s; plans beside %s with weight %g; wrote %s\n",
		m.Examples(), m.Encoder(), m.Prior().Planner, m.Prior().Weight, o.Out)
	return nil
}

// GNNOptions are stem train gnn's and eval-gnn's: the subgraphs, the
// model (Config; its encoder is filled in), the training and the dev set.
type GNNOptions struct {
	Subgraph tripgnn.SubgraphOptions
	Model    tripgnn.Config
	Fit      train.Options
	// Dev and DevQTypes are the dev files (nil: a held-out tenth).
	Dev, DevQTypes []string
	// Model file to score (EvalGNN).
	GNN string
	// Questions names the questions, for an error.
	Questions string
}

// TrainGNN trains the Triple-GNN on d's questions, saving the best model
// on the dev set to o.Fit.Out, and prints the training history to w as
// JSON.
func TrainGNN(ctx context.Context, w, log io.Writer, d *train.Data, encS catalog.EncoderSettings, o GNNOptions) error {
	enc, closeEnc, err := catalog.OpenEncoder(ctx, encS, log)
	if err != nil {
		return err
	}
	defer closeEnc()
	b := tripgnn.NewBuilder(enc, o.Subgraph)
	items, skipped, err := d.Label(ctx, b, log)
	if err != nil {
		return err
	}
	var dev []*tripgnn.Input
	if len(o.Dev) > 0 {
		if dev, err = d.Dev(ctx, o.Dev, o.DevQTypes, b); err != nil {
			return err
		}
	} else {
		items, dev = train.Split(items, 0.1, o.Fit.Seed)
	}
	fmt.Fprintf(log, "train gnn: %d training and %d dev questions (%d skipped: dropped items, or no question entity or gold path in the KG)\n", len(items), len(dev), skipped)
	cfg := o.Model
	cfg.EncoderName, cfg.EncoderDim = enc.Name(), enc.Dim()
	m, err := tripgnn.New(cfg)
	if err != nil {
		return err
	}
	fit := o.Fit
	fit.Progress = log
	h, err := train.Fit(ctx, m, items, dev, fit)
	if err != nil {
		return err
	}
	if info, err := os.Stat(fit.Out); err == nil {
		fmt.Fprintf(log, "train gnn: %s (%d bytes, %d weights): best dev recall@K %.3f at epoch %d; %s; %s\n",
			fit.Out, info.Size(), m.NumParams(), h.BestRecall, h.BestEpoch, h.Stopped, h.Elapsed.Round(1e9))
	}
	out := json.NewEncoder(w)
	out.SetIndent("", "  ")
	return out.Encode(h)
}

// GNNScores are eval-gnn's figures.
type GNNScores struct {
	train.Metrics
	Skipped int `json:"skipped"`
}

// EvalGNN scores the Triple-GNN model o.GNN's guidance graph on d's
// questions against the similarity and hop baselines.
func EvalGNN(ctx context.Context, log io.Writer, d *train.Data, encS catalog.EncoderSettings, o GNNOptions) (*GNNScores, error) {
	enc, closeEnc, err := catalog.OpenEncoder(ctx, encS, log)
	if err != nil {
		return nil, err
	}
	defer closeEnc()
	m, err := tripgnn.Load(o.GNN, enc.Name(), enc.Dim())
	if err != nil {
		return nil, err
	}
	b := tripgnn.NewBuilder(enc, o.Subgraph)
	items, skipped, err := d.Label(ctx, b, log)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("no question of %s has a question entity and a gold path in the KG", o.Questions)
	}
	met, err := train.Evaluate(ctx, m, b, items)
	if err != nil {
		return nil, err
	}
	return &GNNScores{met, skipped}, nil
}

// WriteText prints the scores as stem eval-gnn's table.
func (s *GNNScores) WriteText(w io.Writer) error {
	met := s.Metrics
	fmt.Fprintf(w, "questions        %d (%d skipped)\nrecall@K GNN     %.4f\nrecall@K simil.  %.4f\nrecall@K hops    %.4f\ngold in subgraph %.4f\nmean entities    %.1f\n",
		met.N, s.Skipped, met.RecallGNN, met.RecallSimilarity, met.RecallHops, met.GoldInSubgraph, met.MeanEntities)
	_, err := fmt.Fprintf(w, "answer siblings  %d questions: GNN scores an answer first %.4f, tied %.4f\n", met.SiblingN, met.SiblingAnswerFirst, met.SiblingTied)
	return err
}

// PeerPairs turns training questions into the pairs the trained peers
// learn from (signals.Pair): each question's text with each of its gold
// relation paths, written as a path key. They are the questions and paths
// stem train planner trains STEM's pattern planner on, so the trained
// rows of a comparison learnt from the same data; nothing of STEM's
// planner goes into them. Questions without a gold path are skipped.
func PeerPairs(qs []planeval.Question) []signals.Pair {
	var out []signals.Pair
	for _, q := range qs {
		seen := map[string]bool{}
		for _, path := range q.Gold {
			var b strings.Builder
			for _, s := range path {
				b.WriteString(s.Rel)
				if s.Dir == schema.Inverse {
					b.WriteByte('<')
				} else {
					b.WriteByte('>')
				}
			}
			if k := b.String(); k != "" && !seen[k] {
				seen[k] = true
				out = append(out, signals.Pair{Question: q.Text, Key: k})
			}
		}
	}
	return out
}

// TrainPeer writes the trained peers' training pairs (PeerPairs) of qs to
// out, the file --gcr-model and --graphraft-model read, and says on log
// how many it wrote.
func TrainPeer(log io.Writer, qs []planeval.Question, out string) error {
	return WritePairs(log, PeerPairs(qs), len(qs), out)
}

// SynthesizedPairs is GraphRAFT's ground-truth synthesis (section 4.1,
// graphraft.Synthesize) over d's training questions and KG: for each
// question with entities and gold answers, every template instance of up
// to hops steps is executed and the best by hits, then result size, is
// its query, kept only when it reaches every gold answer the KG holds
// with precision at least 0.1 (the released code's filter). A question
// the KG cannot ground is skipped and counted on log.
func SynthesizedPairs(ctx context.Context, log io.Writer, d Dataset, hops int) (pairs []signals.Pair, questions int, err error) {
	data, err := d.Load(ctx, log)
	if err != nil {
		return nil, 0, err
	}
	var out []signals.Pair
	skipped := 0
	for _, q := range data.Questions {
		g := data.KG
		if q.Graph != nil {
			g = q.Graph
		}
		if g == nil {
			return nil, 0, fmt.Errorf("synthesize: question %s has no KG: give --kg", q.ID)
		}
		cands, err := graphraft.Synthesize(ctx, g, q.Text, q.Entities, q.Answers, hops)
		if err != nil {
			if ctx.Err() != nil {
				return nil, 0, err
			}
			skipped++
			continue
		}
		gold := 0
		for _, a := range q.Answers {
			if _, ok := g.Entity(a); ok {
				gold++
			}
		}
		if len(cands) == 0 || cands[0].Hits < gold || float64(cands[0].Hits) < 0.1*float64(cands[0].Size) {
			skipped++
			continue
		}
		out = append(out, signals.Pair{Question: q.Text, Key: cands[0].Query.Key(g)})
	}
	fmt.Fprintf(log, "synthesis: %d queries kept, %d questions without one (not in the KG, or no query reaching every answer with precision 0.1)\n", len(out), skipped)
	return out, len(data.Questions), nil
}

// WritePairs writes training pairs to out atomically, saying on log how
// many it wrote.
func WritePairs(log io.Writer, pairs []signals.Pair, questions int, out string) error {
	if len(pairs) == 0 {
		return fmt.Errorf("train peer: no training pair from the %d questions", questions)
	}
	if err := atomicfile.Write(out, 0o644, func(w io.Writer) error { return signals.WritePairs(w, pairs) }); err != nil {
		return fmt.Errorf("train peer: %w", err)
	}
	_, err := fmt.Fprintf(log, "%d training pairs from %d questions written to %s (use with --gcr-model or --graphraft-model)\n", len(pairs), questions, out)
	return err
}
