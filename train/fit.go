package train

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/stem-kgqa/stem/progress"
	"github.com/stem-kgqa/stem/tripgnn"
)

// Defaults for Options' zero fields.
const (
	DefaultEpochs   = 20
	DefaultBatch    = 8
	DefaultPatience = 3
)

// Options tune Fit.
type Options struct {
	// Epochs is the most passes over the training items (0 = DefaultEpochs).
	Epochs int
	// Batch is the graphs per training step (0 = DefaultBatch).
	Batch int
	// Patience stops training after this many epochs without a better dev
	// recall (0 = DefaultPatience).
	Patience int
	// Seed shuffles the items each epoch.
	Seed uint64
	// Out, when not "", receives the model (tripgnn.Model.Save, atomic)
	// each time the dev recall improves, and only then, so a run that
	// fails later leaves its best model; Out + ".loss.svg" receives the
	// loss curve after every epoch.
	Out string
	// Progress, when not nil, receives a progress bar.
	Progress io.Writer
}

// History is what Fit did, epoch by epoch.
type History struct {
	TrainLoss []float64 `json:"train_loss"`
	DevRecall []float64 `json:"dev_recall"`
	// DevRPrecision breaks ties of DevRecall (see DevScore).
	DevRPrecision []float64 `json:"dev_r_precision"`
	// BestEpoch is the 1-based epoch of the saved model (0: none).
	BestEpoch  int           `json:"best_epoch"`
	BestRecall float64       `json:"best_recall"`
	Stopped    string        `json:"stopped"`
	Elapsed    time.Duration `json:"elapsed_ns"`
}

// Fit trains m on items with mini-batches shuffled by Seed, measures the
// GNN's recall@K on dev after each epoch, keeps the best model in Out and
// stops early after Patience epochs without improvement. On return m holds
// the last epoch's weights; load Out for the best. A non-finite loss stops
// training with an error, leaving Out as the best model so far.
func Fit(ctx context.Context, m *tripgnn.Model, items, dev []*tripgnn.Input, opt Options) (h History, err error) {
	if len(items) == 0 {
		return h, errors.New("train: no training examples")
	}
	if len(dev) == 0 {
		return h, errors.New("train: no dev examples for early stopping")
	}
	if opt.Epochs <= 0 {
		opt.Epochs = DefaultEpochs
	}
	if opt.Batch <= 0 {
		opt.Batch = DefaultBatch
	}
	if opt.Patience <= 0 {
		opt.Patience = DefaultPatience
	}
	start := time.Now()
	defer func() { h.Elapsed = time.Since(start) }()
	rng := rand.New(rand.NewPCG(opt.Seed, 0x5eed))
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	steps := (len(items) + opt.Batch - 1) / opt.Batch
	var bar *progress.Bar
	if opt.Progress != nil {
		bar = progress.New(opt.Progress, "train gnn", int64(steps*opt.Epochs))
	}
	defer bar.Finish()
	batch := make([]*tripgnn.Example, 0, opt.Batch)
	since := 0
	h.Stopped = "epochs"
	for ep := 1; ep <= opt.Epochs; ep++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		var sum float64
		for s := range steps {
			if err := ctx.Err(); err != nil {
				return h, err
			}
			batch = batch[:0]
			for _, i := range order[s*opt.Batch : min((s+1)*opt.Batch, len(order))] {
				batch = append(batch, items[i].Example)
			}
			loss, err := m.TrainStep(ctx, batch)
			if err != nil {
				return h, fmt.Errorf("train: epoch %d: %w", ep, err)
			}
			sum += float64(loss)
			bar.Add(1)
			bar.Note("epoch %d loss %.4f", ep, sum/float64(s+1))
		}
		h.TrainLoss = append(h.TrainLoss, sum/float64(steps))
		rec, rp, err := DevScore(ctx, m, dev)
		if err != nil {
			return h, fmt.Errorf("train: epoch %d: dev: %w", ep, err)
		}
		h.DevRecall = append(h.DevRecall, rec)
		h.DevRPrecision = append(h.DevRPrecision, rp)
		bar.Note("epoch %d loss %.4f dev recall %.3f r-prec %.3f", ep, h.TrainLoss[ep-1], rec, rp)
		if h.BestEpoch == 0 || rec > h.BestRecall || rec == h.BestRecall && rp > h.DevRPrecision[h.BestEpoch-1] {
			h.BestEpoch, h.BestRecall, since = ep, rec, 0
			if opt.Out != "" {
				if err := m.Save(opt.Out); err != nil {
					return h, err
				}
			}
		} else {
			since++
		}
		if opt.Out != "" {
			if err := WriteCurve(opt.Out+".loss.svg", h); err != nil {
				return h, err
			}
		}
		if since >= opt.Patience {
			h.Stopped = fmt.Sprintf("early stop: no better dev recall for %d epochs", since)
			break
		}
	}
	return h, nil
}

// Split holds out frac of items (at least one) as a dev set, chosen by
// seed, keeping the rest in order.
func Split(items []*tripgnn.Input, frac float64, seed uint64) (trainSet, dev []*tripgnn.Input) {
	n := int(float64(len(items)) * frac)
	if n < 1 {
		n = 1
	}
	if n >= len(items) {
		return items, nil
	}
	rng := rand.New(rand.NewPCG(seed, 0xde7))
	held := map[int]bool{}
	for _, i := range rng.Perm(len(items))[:n] {
		held[i] = true
	}
	for i, it := range items {
		if held[i] {
			dev = append(dev, it)
		} else {
			trainSet = append(trainSet, it)
		}
	}
	return trainSet, dev
}
