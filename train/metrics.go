package train

import (
	"context"
	"fmt"
	"slices"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/tripgnn"
)

// Metrics is recall@K of gold-chain entities for the GNN and the two
// baselines, averaged over questions (values in [0, 1]).
type Metrics struct {
	N                int     `json:"n"`
	RecallGNN        float64 `json:"recall_gnn"`
	RecallSimilarity float64 `json:"recall_similarity"`
	RecallHops       float64 `json:"recall_hops"`
	// GoldInSubgraph is the share of gold-chain entities the subgraph
	// keeps: the ceiling of every ranking.
	GoldInSubgraph float64 `json:"gold_in_subgraph"`
	// MeanEntities is the mean subgraph size.
	MeanEntities float64 `json:"mean_entities"`
	// SiblingN counts the questions whose gold relation paths reach, in
	// the subgraph, both a gold answer and an entity that is not one (a
	// sibling). Over them, SiblingAnswerFirst is the share where the GNN
	// scores a gold answer above every sibling and SiblingTied the share
	// where the best answer and the best sibling score the same (within
	// 1e-5): what the GNN can add to the order of the answers tracing
	// binds, which relations alone leave tied.
	SiblingN           int     `json:"sibling_n"`
	SiblingAnswerFirst float64 `json:"sibling_answer_first"`
	SiblingTied        float64 `json:"sibling_tied"`
}

// siblingOrder compares, among the gold path's ends in the subgraph, the
// best GNN score of a gold answer with the best of a non-answer. ok is
// false when the ends do not hold both.
func siblingOrder(it *tripgnn.Input, probs []float32) (first, tied, ok bool) {
	isEnd := make(map[int32]bool, len(it.Ends))
	for _, e := range it.Ends {
		isEnd[e] = true
	}
	isAns := make(map[int32]bool, len(it.Answers))
	for _, e := range it.Answers {
		isAns[e] = true
	}
	bestA, bestS := float32(-1), float32(-1)
	for i, e := range it.Entities {
		switch {
		case !isEnd[e]:
		case isAns[e]:
			bestA = max(bestA, probs[i])
		default:
			bestS = max(bestS, probs[i])
		}
	}
	if bestA < 0 || bestS < 0 {
		return false, false, false
	}
	d := bestA - bestS
	return d > 1e-5, d <= 1e-5 && d >= -1e-5, true
}

// Recall is |top ∩ gold| / |gold| for the local ids top mapped to KG ids by
// ents; 0 when gold is empty.
func Recall(top, ents, gold []int32) float64 {
	if len(gold) == 0 {
		return 0
	}
	in := make(map[int32]bool, len(gold))
	for _, g := range gold {
		in[g] = true
	}
	hit := 0
	for _, i := range top {
		if in[ents[i]] {
			hit++
			in[ents[i]] = false
		}
	}
	return float64(hit) / float64(len(gold))
}

// RankHops orders it's entities by hop distance from the question entities
// (edges walked both ways), then KG degree, higher first, then id.
func RankHops(it *tripgnn.Input) []int32 {
	ex := it.Example
	n := ex.NumEntities
	adj := make([][]int32, n)
	for i := range ex.Heads {
		h, t := ex.Heads[i], ex.Tails[i]
		adj[h] = append(adj[h], t)
		adj[t] = append(adj[t], h)
	}
	dist := make([]int, n)
	for i := range dist {
		dist[i] = n + 1
	}
	queue := []int32{}
	for _, q := range ex.Question {
		if dist[q] != 0 {
			dist[q] = 0
			queue = append(queue, q)
		}
	}
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		for _, o := range adj[e] {
			if dist[o] > dist[e]+1 {
				dist[o] = dist[e] + 1
				queue = append(queue, o)
			}
		}
	}
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		if dist[a] != dist[b] {
			return dist[a] - dist[b]
		}
		da, db := it.Graph.Degree(it.Entities[a]), it.Graph.Degree(it.Entities[b])
		if da != db {
			return db - da
		}
		return int(a - b)
	})
	return order
}

// RankSimilarity orders it's entities by the cosine between each entity's
// text and the question text, highest first (ties by id).
func RankSimilarity(ctx context.Context, b *tripgnn.Builder, it *tripgnn.Input) ([]int32, error) {
	d := b.Enc.Dim()
	texts := make([]string, 0, len(it.Entities)+1)
	texts = append(texts, it.Text)
	for _, e := range it.Entities {
		texts = append(texts, kg.EntityTextOf(it.Graph, e))
	}
	vecs, err := b.Encode(ctx, texts)
	if err != nil {
		return nil, err
	}
	score := make([]float32, len(it.Entities))
	for i := range score {
		score[i] = models.Cosine(vecs[:d], vecs[(i+1)*d:(i+2)*d])
	}
	return tripgnn.TopK(score, len(score)), nil
}

// Evaluate scores the model and both baselines on items (which must carry
// Gold), K = m.K(NumSchema) per question.
func Evaluate(ctx context.Context, m *tripgnn.Model, b *tripgnn.Builder, items []*tripgnn.Input) (Metrics, error) {
	var s Metrics
	for _, it := range items {
		if err := ctx.Err(); err != nil {
			return s, err
		}
		k := m.K(it.NumSchema)
		probs, err := m.PredictPadded(ctx, it.Example)
		if err != nil {
			return s, fmt.Errorf("train: question %s: %w", it.ID, err)
		}
		sim, err := RankSimilarity(ctx, b, it)
		if err != nil {
			return s, err
		}
		hops := RankHops(it)
		s.RecallGNN += Recall(tripgnn.TopK(probs, k), it.Entities, it.Gold)
		s.RecallSimilarity += Recall(sim[:min(k, len(sim))], it.Entities, it.Gold)
		s.RecallHops += Recall(hops[:min(k, len(hops))], it.Entities, it.Gold)
		all := make([]int32, len(it.Entities))
		for i := range all {
			all[i] = int32(i)
		}
		s.GoldInSubgraph += Recall(all, it.Entities, it.Gold)
		s.MeanEntities += float64(len(it.Entities))
		if first, tied, ok := siblingOrder(it, probs); ok {
			s.SiblingN++
			if first {
				s.SiblingAnswerFirst++
			}
			if tied {
				s.SiblingTied++
			}
		}
		s.N++
	}
	if s.N > 0 {
		n := float64(s.N)
		s.RecallGNN /= n
		s.RecallSimilarity /= n
		s.RecallHops /= n
		s.GoldInSubgraph /= n
		s.MeanEntities /= n
	}
	if s.SiblingN > 0 {
		s.SiblingAnswerFirst /= float64(s.SiblingN)
		s.SiblingTied /= float64(s.SiblingN)
	}
	return s, nil
}

// DevScore is the GNN's mean recall@K on items (the early-stopping
// metric) and its mean R-precision, recall at K = the number of gold
// entities the subgraph holds, which breaks ties once recall@K saturates
// (PathQuestion's small subgraphs reach recall@K 1 within an epoch).
func DevScore(ctx context.Context, m *tripgnn.Model, items []*tripgnn.Input) (recall, rprec float64, err error) {
	for _, it := range items {
		probs, err := m.PredictPadded(ctx, it.Example)
		if err != nil {
			return 0, 0, fmt.Errorf("train: question %s: %w", it.ID, err)
		}
		recall += Recall(tripgnn.TopK(probs, m.K(it.NumSchema)), it.Entities, it.Gold)
		var in int
		for _, y := range it.Example.Labels {
			if y > 0 {
				in++
			}
		}
		if in > 0 {
			hit := Recall(tripgnn.TopK(probs, in), it.Entities, it.Gold) * float64(len(it.Gold))
			rprec += hit / float64(in)
		}
	}
	if len(items) == 0 {
		return 0, 0, nil
	}
	return recall / float64(len(items)), rprec / float64(len(items)), nil
}
