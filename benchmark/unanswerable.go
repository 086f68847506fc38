package benchmark

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"slices"

	"github.com/stem-kgqa/stem/kg"
)

// DefaultUnanswerableFraction is the share of a benchmark's questions whose
// answer edges an unanswerable variant removes: one in five.
const DefaultUnanswerableFraction = 0.2

// UnanswerableSampled reports whether the question with this id is in the
// fixed sample of an unanswerable variant: the FNV-1a 64-bit hash of
// "unanswerable", a zero byte and the id, mixed by SplitMix64's finaliser
// (FNV's high bits alone follow the last bytes of ids like "WebQTest-12"
// too closely) and read as a fraction in [0, 1), falls below fraction. Like HalfOf it depends on the id alone; the prefix
// keeps the sample independent of HalfOf's split.
func UnanswerableSampled(id string, fraction float64) bool {
	return Sample{Fraction: fraction, Salt: "unanswerable"}.Sampled(id)
}

// NegativesSalt is the salt of the sample stem train selector removes the
// answers of (its negatives): another salt than the test variants' makes
// the training sample independent of which questions a variant removes.
const NegativesSalt = "selector-negatives"

// Sample is a fixed sample of questions by id hash: Fraction of them,
// drawn by the hash salted with Salt (different salts, independent
// samples).
type Sample struct {
	Fraction float64
	Salt     string
}

// Sampled reports whether the question with this id is in the sample: the
// FNV-1a 64-bit hash of the salt, a zero byte and the id, mixed by
// SplitMix64's finaliser, read as a fraction in [0, 1), falls below
// s.Fraction.
func (s Sample) Sampled(id string) bool {
	h := fnv.New64a()
	h.Write([]byte(s.Salt + "\x00"))
	h.Write([]byte(id))
	x := h.Sum64()
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11)/(1<<53) < s.Fraction
}

// Unanswerable is the manifest of an unanswerable variant of a benchmark
// (RemoveAnswers): which questions lost their answers and which triples
// were removed, written beside the variant's KG and questions.
type Unanswerable struct {
	// Fraction is the share of questions sampled (UnanswerableSampled).
	Fraction float64 `json:"fraction"`
	// Questions counts the questions the variant was made from.
	Questions int `json:"questions"`
	// Removed are the sampled questions whose answer edges were removed,
	// in question order.
	Removed []string `json:"removed"`
	// Unreachable are the other questions whose gold answers the removal
	// made unreachable along their gold paths: they lost their answer too,
	// through edges they shared with a removed question.
	Unreachable []string `json:"unreachable"`
	// NoGoldPath counts the questions whose gold path reaches no gold
	// answer in the original KG (or that have no gold path): they cannot
	// lose an answer they do not reach, so they are never sampled, and
	// they stay in the answerable side as the original run scores them.
	NoGoldPath int `json:"no_gold_path"`
	// Triples are the removed (head, relation, tail) triples.
	Triples [][3]string `json:"triples"`
	// Files are the variant's files, by role ("kg", "questions", ...), as
	// the command that wrote them named them.
	Files map[string][]string `json:"files,omitempty"`
}

// Lost is the set of the ids of the questions the variant's KG lacks the
// answers of: Removed and Unreachable.
func (u *Unanswerable) Lost() map[string]bool {
	out := make(map[string]bool, len(u.Removed)+len(u.Unreachable))
	for _, id := range u.Removed {
		out[id] = true
	}
	for _, id := range u.Unreachable {
		out[id] = true
	}
	return out
}

// ReadUnanswerable reads a manifest RemoveAnswers' caller wrote.
func ReadUnanswerable(path string) (*Unanswerable, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read unanswerable manifest: %w", err)
	}
	var u Unanswerable
	if err := json.Unmarshal(b, &u); err != nil {
		return nil, fmt.Errorf("read unanswerable manifest %s: %w", path, err)
	}
	if u.Removed == nil {
		return nil, fmt.Errorf("read unanswerable manifest %s: no \"removed\" list", path)
	}
	return &u, nil
}

// Write writes u as indented JSON.
func (u *Unanswerable) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(u)
}

// RemoveAnswers makes the unanswerable variant of a benchmark over g: the
// KG without the answer edges of the questions UnanswerableSampled picks.
// A question's answer edges are the last step of its gold relation paths
// grounded in g (GoldTriples' walks: from the path's start, or the
// question's topic entities, along the steps in their directions): every
// triple of that step that ends at a gold answer. PathQuestion's named
// paths are among those walks; MetaQA's are its question type's relations
// from the topic entity, so the removed triples join the answers to the
// topic's (hops-1)-hop neighbourhood through the question's last relation;
// WebQSP's are RoG's ground paths. Only the last step goes: the
// neighbourhood the question walks stays, so what is missing is the
// answer, not the question's entities. Removing edges can cut other
// questions off their answers too; those are listed in Unreachable.
func RemoveAnswers(ctx context.Context, g *kg.Graph, qs []Question, fraction float64) (*kg.Graph, *Unanswerable, error) {
	return RemoveSampled(ctx, g, qs, Sample{Fraction: fraction, Salt: "unanswerable"})
}

// RemoveSampled is RemoveAnswers over the questions s samples: stem train
// selector removes the answers of its training questions with another
// salt (NegativesSalt) than the test variants'.
func RemoveSampled(ctx context.Context, g *kg.Graph, qs []Question, s Sample) (*kg.Graph, *Unanswerable, error) {
	fraction := s.Fraction
	if g == nil {
		return nil, nil, fmt.Errorf("unanswerable variant: a shared KG is needed")
	}
	if fraction <= 0 || fraction >= 1 {
		return nil, nil, fmt.Errorf("unanswerable variant: fraction %v: want one in (0, 1)", fraction)
	}
	u := &Unanswerable{Fraction: fraction, Questions: len(qs), Removed: []string{}, Unreachable: []string{}}
	drop := map[int32]bool{}
	reached := make([]bool, len(qs))
	for i, q := range qs {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		last := answerEdges(g, q)
		if len(last) == 0 {
			u.NoGoldPath++
			continue
		}
		reached[i] = true
		if !s.Sampled(q.ID) {
			continue
		}
		u.Removed = append(u.Removed, q.ID)
		for _, t := range last {
			drop[t] = true
		}
	}
	ts := make([][3]string, 0, g.NumTriples()-len(drop))
	for t := range int32(g.NumTriples()) {
		tr := g.Triple(t)
		name := [3]string{g.EntityName(tr.Head), g.RelationName(tr.Rel), g.EntityName(tr.Tail)}
		if drop[t] {
			u.Triples = append(u.Triples, name)
		} else {
			ts = append(ts, name)
		}
	}
	out, err := kg.GraphOf(ts)
	if err != nil {
		return nil, nil, fmt.Errorf("unanswerable variant: %w", err)
	}
	removed := u.Lost()
	for i, q := range qs {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		if reached[i] && !removed[q.ID] && len(answerEdges(out, q)) == 0 {
			u.Unreachable = append(u.Unreachable, q.ID)
		}
	}
	return out, u, nil
}

// answerEdges returns the ids of the triples in g on the last step of q's
// grounded gold paths that end at a gold answer, sorted; none when no
// gold path reaches one.
func answerEdges(g *kg.Graph, q Question) []int32 {
	answers := map[int32]bool{}
	for _, a := range q.Answers {
		if id, ok := g.Entity(a); ok {
			answers[id] = true
		}
	}
	if len(answers) == 0 {
		return nil
	}
	set := map[int32]bool{}
	for _, gp := range q.Gold {
		if len(gp.Steps) == 0 {
			continue
		}
		for _, start := range goldStarts(g, q, gp) {
			levels, _ := sweep(g, start, gp.Steps)
			if levels == nil {
				continue
			}
			for _, h := range levels[len(levels)-1] {
				if answers[h.to] {
					set[h.t] = true
				}
			}
		}
	}
	out := make([]int32, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}
