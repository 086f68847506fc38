// Package planeval scores planners' relation paths and strategies against
// the gold reasoning paths of benchmark questions (plan quality, before any
// retrieval): whether any of the B planned paths is a gold path (any-hit),
// whether the first one is (top-1), how many of the gold paths were planned
// (path recall), how much of the gold path the top schema graph holds
// (schema-graph precision, recall and F1, the paper's eq. 45-47), and
// whether the strategy is the labelling rule's (Breadth iff the question
// has more than one gold answer), also split by answer count as in the
// paper's Table 15.
package planeval

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
)

// Item is one question's plan next to its gold data.
type Item struct {
	// Gold are the question's gold relation paths; a question without any
	// is not scored.
	Gold [][]schema.Step
	// Answers is the number of gold answers, or -1 when the dataset does
	// not give them (strategy accuracy then leaves the question out).
	Answers int
	// Paths are the planned relation paths, best first.
	Paths [][]schema.Step
	// Triples are the candidates' schema graphs, best first, each as its
	// triples' relation steps (see Triples), for the schema-graph P/R/F1;
	// nil means Paths.
	Triples [][]schema.Step
	// Strategy is the planned strategy (the top candidate's).
	Strategy schema.Strategy
	// Strategies are the candidates' own strategies, best first, when the
	// planner gives one per candidate (llm); nil otherwise.
	Strategies []schema.Strategy
	// Latency is the planner's time for the question.
	Latency time.Duration
}

// Report holds plan-quality figures in percent over N questions.
type Report struct {
	N          int     `json:"n"`
	AnyHit     float64 `json:"any_hit"`
	Top1       float64 `json:"top1"`
	PathRecall float64 `json:"path_recall"`
	// SchemaP, SchemaR and SchemaF1 are the top candidate's schema-graph
	// precision, recall and F1 against the gold path (paper eq. 45-47, see
	// SchemaPRF), macro-averaged over the N questions.
	SchemaP  float64 `json:"schema_precision"`
	SchemaR  float64 `json:"schema_recall"`
	SchemaF1 float64 `json:"schema_f1"`
	// UnionP, UnionR and UnionF1 are the same over the union of all the
	// candidates' triples (a multiset union: each relation and direction
	// as often as the candidate holding it most often has it).
	UnionP  float64 `json:"union_precision"`
	UnionR  float64 `json:"union_recall"`
	UnionF1 float64 `json:"union_f1"`
	// StrategyAcc is nil when no question has a known answer count.
	StrategyAcc *float64 `json:"strategy_acc,omitempty"`
	StrategyN   int      `json:"strategy_n"`
	// StrategySingle is the share of Precision strategies over the
	// StrategySingleN questions with one gold answer, StrategyMulti that
	// of Breadth over the StrategyMultiN with two or more (the paper's
	// Table 15); nil when there are none. Questions with no answer are in
	// neither.
	StrategySingle  *float64 `json:"strategy_acc_single,omitempty"`
	StrategySingleN int      `json:"strategy_single_n"`
	StrategyMulti   *float64 `json:"strategy_acc_multi,omitempty"`
	StrategyMultiN  int      `json:"strategy_multi_n"`
	// CandidateStrategyAcc is, for planners with a strategy per candidate,
	// the share of all candidates (of questions with a known answer count)
	// whose strategy is the labelling rule's; nil for other planners.
	CandidateStrategyAcc *float64 `json:"candidate_strategy_acc,omitempty"`
	CandidateStrategyN   int      `json:"candidate_strategy_n"`
	// NoGold counts questions left out for having no gold path.
	NoGold int `json:"no_gold"`
	// Beam is the most paths any question was allowed (for the record).
	Beam         int     `json:"beam"`
	LatencyP50MS float64 `json:"latency_p50_ms"`
	LatencyP95MS float64 `json:"latency_p95_ms"`
	LatencyMean  float64 `json:"latency_mean_ms"`
}

// SameSteps reports whether a planned path equals a gold path: the same
// relations in the same order, and the same direction at every step where
// both sides know it (a gold step walked Either, as WebQSP's are, matches
// a step in either direction).
//
// An empty planned path matches nothing (it stands for a candidate that
// is not a path).
func SameSteps(pred, gold []schema.Step) bool {
	if len(pred) == 0 || len(pred) != len(gold) {
		return false
	}
	for i := range pred {
		if pred[i].Rel != gold[i].Rel {
			return false
		}
		if pred[i].Dir != schema.Either && gold[i].Dir != schema.Either && pred[i].Dir != gold[i].Dir {
			return false
		}
	}
	return true
}

// HitRank is the 1-based rank of the first planned path equal to a gold
// path (SameSteps), 0 when none is: 1 is a top-1 hit, any rank an any-hit.
func HitRank(paths, gold [][]schema.Step) int {
	for i, p := range paths {
		if slices.ContainsFunc(gold, func(g []schema.Step) bool { return SameSteps(p, g) }) {
			return i + 1
		}
	}
	return 0
}

// SchemaPRF scores a schema graph against a question's gold paths (paper
// eq. 45-47): with G the graph's triples and R a gold path's, precision
// is |R ∩ G| / |G|, recall |R ∩ G| / |R| and F1 their harmonic mean.
// Triples are compared as relation steps: the same relation after
// kg.Normalize ("film.film.directed_by" = "directed by"), and the same
// direction where both sides know it (Either, as in WebQSP's gold paths
// and in schema graphs that are not a path, matches both); each triple
// is matched at most once (a maximum matching). With several gold paths
// the one giving the best F1 counts (the first among equals). An empty
// graph or gold path scores 0. Results are fractions in [0, 1].
func SchemaPRF(graph []schema.Step, gold [][]schema.Step) (p, r, f1 float64) {
	for _, g := range gold {
		if len(graph) == 0 || len(g) == 0 {
			continue
		}
		m := float64(matchSteps(graph, g))
		gp, gr := m/float64(len(graph)), m/float64(len(g))
		gf := 0.0
		if m > 0 {
			gf = 2 * gp * gr / (gp + gr)
		}
		if gf > f1 {
			p, r, f1 = gp, gr, gf
		}
	}
	return p, r, f1
}

// matchSteps is the size of a maximum matching between a and b, a step
// of one matching a step of the other when their normalised relations
// are equal and their directions agree (Either agrees with both).
func matchSteps(a, b []schema.Step) int {
	an, bn := make([]string, len(a)), make([]string, len(b))
	for i, s := range a {
		an[i] = kg.Normalize(s.Rel)
	}
	for i, s := range b {
		bn[i] = kg.Normalize(s.Rel)
	}
	fits := func(i, j int) bool {
		return an[i] == bn[j] && (a[i].Dir == schema.Either || b[j].Dir == schema.Either || a[i].Dir == b[j].Dir)
	}
	owner := make([]int, len(b)) // owner[j] is the a-step matched to b[j], or -1
	for j := range owner {
		owner[j] = -1
	}
	var augment func(i int, seen []bool) bool
	augment = func(i int, seen []bool) bool {
		for j := range b {
			if seen[j] || !fits(i, j) {
				continue
			}
			seen[j] = true
			if owner[j] < 0 || augment(owner[j], seen) {
				owner[j] = i
				return true
			}
		}
		return false
	}
	n := 0
	for i := range a {
		if augment(i, make([]bool, len(b))) {
			n++
		}
	}
	return n
}

// union returns the multiset union of graphs' steps: each step (by
// normalised relation and direction) as many times as the graph holding
// it most often does ("children, children, parents" and "children,
// spouse" give children twice, parents, spouse), in first-seen order.
func union(graphs [][]schema.Step) []schema.Step {
	type key struct {
		rel string
		dir schema.Direction
	}
	most := map[key]int{}
	var out []schema.Step
	for _, g := range graphs {
		n := map[key]int{}
		for _, s := range g {
			k := key{kg.Normalize(s.Rel), s.Dir}
			n[k]++
			if n[k] > most[k] {
				most[k] = n[k]
				out = append(out, s)
			}
		}
	}
	return out
}

// wantStrategy is the labelling rule: Breadth iff more than one answer.
func wantStrategy(answers int) schema.Strategy {
	if answers > 1 {
		return schema.Breadth
	}
	return schema.Precision
}

// Score computes the report over items; beam only labels it.
func Score(items []Item, beam int) Report {
	r := Report{Beam: beam}
	var hit, top1, recall, strat float64
	var sp, sr, sf, up, ur, uf, single, multi, candOK float64
	var lat []float64
	for _, it := range items {
		lat = append(lat, float64(it.Latency)/float64(time.Millisecond))
		if len(it.Gold) == 0 {
			r.NoGold++
			continue
		}
		r.N++
		found := 0
		for _, g := range it.Gold {
			for _, p := range it.Paths {
				if SameSteps(p, g) {
					found++
					break
				}
			}
		}
		recall += float64(found) / float64(len(it.Gold))
		if rank := HitRank(it.Paths, it.Gold); rank > 0 {
			hit++
			if rank == 1 {
				top1++
			}
		}
		graphs := it.Triples
		if graphs == nil {
			graphs = it.Paths
		}
		if len(graphs) > 0 {
			p, rc, f := SchemaPRF(graphs[0], it.Gold)
			sp, sr, sf = sp+p, sr+rc, sf+f
			p, rc, f = SchemaPRF(union(graphs), it.Gold)
			up, ur, uf = up+p, ur+rc, uf+f
		}
		if it.Answers >= 0 {
			r.StrategyN++
			want := wantStrategy(it.Answers)
			ok := it.Strategy == want
			if ok {
				strat++
			}
			switch {
			case it.Answers == 1:
				r.StrategySingleN++
				if ok {
					single++
				}
			case it.Answers >= 2:
				r.StrategyMultiN++
				if ok {
					multi++
				}
			}
			for _, s := range it.Strategies {
				r.CandidateStrategyN++
				if s == want {
					candOK++
				}
			}
		}
	}
	if r.N > 0 {
		n := float64(r.N)
		r.AnyHit, r.Top1, r.PathRecall = round(100*hit/n), round(100*top1/n), round(100*recall/n)
		r.SchemaP, r.SchemaR, r.SchemaF1 = round(100*sp/n), round(100*sr/n), round(100*sf/n)
		r.UnionP, r.UnionR, r.UnionF1 = round(100*up/n), round(100*ur/n), round(100*uf/n)
	}
	r.StrategyAcc = share(strat, r.StrategyN)
	r.StrategySingle = share(single, r.StrategySingleN)
	r.StrategyMulti = share(multi, r.StrategyMultiN)
	r.CandidateStrategyAcc = share(candOK, r.CandidateStrategyN)
	if len(lat) > 0 {
		slices.Sort(lat)
		r.LatencyP50MS = round(quantile(lat, 0.5))
		r.LatencyP95MS = round(quantile(lat, 0.95))
		var s float64
		for _, x := range lat {
			s += x
		}
		r.LatencyMean = round(s / float64(len(lat)))
	}
	return r
}

// share is 100*k/n rounded, nil when n is 0.
func share(k float64, n int) *float64 {
	if n == 0 {
		return nil
	}
	a := round(100 * k / float64(n))
	return &a
}

func quantile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func round(x float64) float64 { return math.Round(x*100) / 100 }

// StepsOf reads a path-shaped schema graph back into relation steps: from
// its entity mention, a triple (previous, rel, next) is a Forward step and
// (next, rel, previous) an Inverse one, as schema.PathGraph writes them.
// ok is false when g is not a simple path from one mention.
func StepsOf(g schema.Graph) (steps []schema.Step, ok bool) {
	ms := g.Mentions()
	if len(ms) != 1 || len(g.Triples) == 0 {
		return nil, false
	}
	cur := ms[0]
	used := make([]bool, len(g.Triples))
	for range g.Triples {
		next := -1
		for i, t := range g.Triples {
			if used[i] {
				continue
			}
			switch {
			case t.Head == cur:
				steps = append(steps, schema.Step{Rel: t.Rel, Dir: schema.Forward})
				cur, next = t.Tail, i
			case t.Tail == cur:
				steps = append(steps, schema.Step{Rel: t.Rel, Dir: schema.Inverse})
				cur, next = t.Head, i
			}
			if next >= 0 {
				break
			}
		}
		if next < 0 {
			return nil, false
		}
		used[next] = true
	}
	return steps, true
}

// GraphSteps reads a schema graph's triples as relation steps for
// SchemaPRF: a path-shaped graph (StepsOf) with its directions, any
// other graph's triples walked Either way, since only a path says which
// way a triple is walked from the question's entity.
func GraphSteps(g schema.Graph) []schema.Step {
	if steps, ok := StepsOf(g); ok {
		return steps
	}
	out := make([]schema.Step, len(g.Triples))
	for i, t := range g.Triples {
		out[i] = schema.Step{Rel: t.Rel, Dir: schema.Either}
	}
	return out
}

// Format writes a path as "rel1 > rel2 <" (">" forward, "<" inverse, "~"
// either), for logs and notes.
func Format(steps []schema.Step) string {
	parts := make([]string, len(steps))
	for i, s := range steps {
		d := ">"
		switch s.Dir {
		case schema.Inverse:
			d = "<"
		case schema.Either:
			d = "~"
		}
		parts[i] = s.Rel + " " + d
	}
	return strings.Join(parts, " ")
}

// String renders the report on one line.
func (r Report) String() string {
	s := fmt.Sprintf("n=%d any_hit=%.2f top1=%.2f path_recall=%.2f", r.N, r.AnyHit, r.Top1, r.PathRecall)
	if r.StrategyAcc != nil {
		s += fmt.Sprintf(" strategy_acc=%.2f (n=%d)", *r.StrategyAcc, r.StrategyN)
	}
	return s + fmt.Sprintf(" latency_p50=%.3fms", r.LatencyP50MS)
}

// Table renders the schema-graph and strategy figures as lines under
// String's, for eval-plans' table output.
func (r Report) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "schema graph (top candidate)   P=%.2f R=%.2f F1=%.2f\n", r.SchemaP, r.SchemaR, r.SchemaF1)
	fmt.Fprintf(&b, "schema graph (union of B)      P=%.2f R=%.2f F1=%.2f\n", r.UnionP, r.UnionR, r.UnionF1)
	if r.StrategySingle == nil && r.StrategyMulti == nil {
		b.WriteString("strategy by answer count       omitted: no answer counts (webqsp-paths: --answers FILE) or no strategy (rog-reference)\n")
	} else {
		fmt.Fprintf(&b, "strategy by answer count       answers=1 precision %s (n=%d)  answers>=2 breadth %s (n=%d)\n",
			pct(r.StrategySingle), r.StrategySingleN, pct(r.StrategyMulti), r.StrategyMultiN)
	}
	if r.CandidateStrategyAcc != nil {
		fmt.Fprintf(&b, "per-candidate strategy         %.2f (n=%d candidates)\n", *r.CandidateStrategyAcc, r.CandidateStrategyN)
	}
	return b.String()
}

func pct(x *float64) string {
	if x == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *x)
}
