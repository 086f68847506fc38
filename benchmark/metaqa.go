package benchmark

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/schema"
)

// metaQATypeRelation maps a MetaQA entity type, as written in the qtype
// files, to the kb.txt relation linking it to a movie. Every MetaQA
// relation has the movie as its head, so a hop from a movie to a type is
// schema.Forward and a hop from a type to a movie is schema.Inverse.
var metaQATypeRelation = map[string]string{
	"actor":      "starred_actors",
	"director":   "directed_by",
	"writer":     "written_by",
	"year":       "release_year",
	"language":   "in_language",
	"tags":       "has_tags",
	"tag":        "has_tags",
	"genre":      "has_genre",
	"imdbvotes":  "has_imdb_votes",
	"votes":      "has_imdb_votes",
	"imdbrating": "has_imdb_rating",
	"rating":     "has_imdb_rating",
}

// MetaQAPath turns a qtype such as "actor_to_movie_to_director" into its
// gold relation steps: starred_actors (inverse), then directed_by
// (forward). Each hop must have a movie on one side.
func MetaQAPath(qtype string) ([]schema.Step, error) {
	types := strings.Split(strings.TrimSpace(qtype), "_to_")
	if len(types) < 2 {
		return nil, fmt.Errorf("%w: qtype %q is not type_to_type[_to_type...]", ErrSyntax, clip(qtype))
	}
	steps := make([]schema.Step, 0, len(types)-1)
	for i := 0; i+1 < len(types); i++ {
		a, b := types[i], types[i+1]
		switch {
		case a == "movie" && b != "movie":
			rel, ok := metaQATypeRelation[b]
			if !ok {
				return nil, fmt.Errorf("%w: qtype %q: unknown entity type %q", ErrSyntax, clip(qtype), clip(b))
			}
			steps = append(steps, schema.Step{Rel: rel, Dir: schema.Forward})
		case b == "movie" && a != "movie":
			rel, ok := metaQATypeRelation[a]
			if !ok {
				return nil, fmt.Errorf("%w: qtype %q: unknown entity type %q", ErrSyntax, clip(qtype), clip(a))
			}
			steps = append(steps, schema.Step{Rel: rel, Dir: schema.Inverse})
		default:
			return nil, fmt.Errorf("%w: qtype %q: hop %s_to_%s has no movie side", ErrSyntax, clip(qtype), clip(a), clip(b))
		}
	}
	return steps, nil
}

// ParseMetaQA parses one MetaQA line, "question with [topic entity]<TAB>
// ans1|ans2|...". The returned Question has the topic entity and answers
// but no ID and no gold path (that comes from the qtype file).
func ParseMetaQA(line string) (Question, error) {
	line = strings.TrimRight(line, "\r\n")
	text, ans, ok := strings.Cut(line, "\t")
	if !ok || strings.Contains(ans, "\t") {
		return Question{}, fmt.Errorf("%w: want question<TAB>answers", ErrSyntax)
	}
	i := strings.IndexByte(text, '[')
	j := strings.LastIndexByte(text, ']')
	if i < 0 || j < i {
		return Question{}, fmt.Errorf("%w: question %q has no [topic entity]", ErrSyntax, clip(text))
	}
	topic := strings.TrimSpace(text[i+1 : j])
	if topic == "" {
		return Question{}, fmt.Errorf("%w: question %q has an empty [topic entity]", ErrSyntax, clip(text))
	}
	answers := splitTrimmed(ans, "|")
	if len(answers) == 0 {
		return Question{}, fmt.Errorf("%w: no answers", ErrSyntax)
	}
	return Question{Text: strings.TrimSpace(text), Answers: answers, Entities: []string{topic}}, nil
}

// ReadMetaQA reads MetaQA questions from qa and, when qtypes is not nil,
// their line-aligned qtypes, which become gold paths. Blank lines are not
// allowed in either, since alignment is by line.
func ReadMetaQA(ctx context.Context, qa io.Reader, qaName string, qtypes io.Reader, qtName string) ([]Question, error) {
	var out []Question
	var ts *bufio.Scanner
	if qtypes != nil {
		ts = bufio.NewScanner(qtypes)
	}
	sc := bufio.NewScanner(qa)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	n := 0
	for sc.Scan() {
		n++
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		q, err := ParseMetaQA(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", qaName, n, err)
		}
		q.ID = filepath.Base(qaName) + ":" + strconv.Itoa(n)
		if ts != nil {
			if !ts.Scan() {
				if err := ts.Err(); err != nil {
					return nil, fmt.Errorf("%s:%d: %w", qtName, n, err)
				}
				return nil, fmt.Errorf("%s:%d: %w: qtype file ends before the questions (%s)", qtName, n, ErrSyntax, qaName)
			}
			qt := strings.TrimSpace(ts.Text())
			steps, err := MetaQAPath(qt)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", qtName, n, err)
			}
			q.Type = qt
			q.Gold = []schema.GoldPath{{Start: q.Entities[0], Steps: steps}}
			q.Hops = len(steps)
		}
		out = append(out, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", qaName, n+1, err)
	}
	if ts != nil && ts.Scan() {
		return nil, fmt.Errorf("%s:%d: %w: qtype file has more lines than %s", qtName, n+1, ErrSyntax, qaName)
	}
	return out, nil
}

// LoadMetaQA reads a MetaQA question file and, when qtypePath is not "",
// its qtype file.
func LoadMetaQA(ctx context.Context, qaPath, qtypePath string) ([]Question, error) {
	f, err := os.Open(qaPath)
	if err != nil {
		return nil, fmt.Errorf("load MetaQA: %w", err)
	}
	defer f.Close()
	var qt io.Reader
	var qtName string
	if qtypePath != "" {
		g, err := os.Open(qtypePath)
		if err != nil {
			return nil, fmt.Errorf("load MetaQA qtypes: %w", err)
		}
		defer g.Close()
		qt, qtName = g, qtypePath
	}
	return ReadMetaQA(ctx, f, qaPath, qt, qtName)
}

// Answerable keeps the questions whose gold answers all lie within
// q.Hops edges of a topic entity, walking g's edges in both directions (a
// question with Hops 0 is allowed 1 hop), and returns how many it dropped.
// The rebuilt MetaQA kb.txt is lossy, so figures on it are reported on this
// subset. A question whose topic entity or an answer is not in g is
// dropped.
func Answerable(ctx context.Context, g *kg.Graph, qs []Question) (kept []Question, dropped int, err error) {
	w := newWalker(g)
	for i, q := range qs {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, 0, err
			}
		}
		if w.answerable(q) {
			kept = append(kept, q)
		} else {
			dropped++
		}
	}
	return kept, dropped, nil
}

// walker holds reusable per-entity marks so that checking thousands of
// questions allocates nothing per question beyond the frontier slices.
type walker struct {
	g     *kg.Graph
	mark  []int32 // stamp of the question that reached the entity
	stamp int32
	cur   []int32
	next  []int32
}

func newWalker(g *kg.Graph) *walker {
	return &walker{g: g, mark: make([]int32, g.NumEntities())}
}

func (w *walker) answerable(q Question) bool {
	g := w.g
	hops := q.Hops
	if hops < 1 {
		hops = 1
	}
	ans := make([]int32, 0, len(q.Answers))
	for _, a := range q.Answers {
		id, ok := g.Entity(a)
		if !ok {
			return false
		}
		ans = append(ans, id)
	}
	w.stamp++
	if w.stamp == 0 { // wrapped: clear old marks
		clear(w.mark)
		w.stamp = 1
	}
	w.cur = w.cur[:0]
	for _, e := range q.Entities {
		if id, ok := g.Entity(e); ok && w.mark[id] != w.stamp {
			w.mark[id] = w.stamp
			w.cur = append(w.cur, id)
		}
	}
	if len(w.cur) == 0 {
		return false
	}
	heads, _, tails := g.Columns()
	// Expand hops-1 levels, then decide the last level from whichever side
	// is cheaper: the frontier's edges or the answers' edges (a hub answer
	// such as a genre has thousands).
	for level := 1; level < hops; level++ {
		w.next = w.next[:0]
		for _, e := range w.cur {
			w.visit(e, heads, tails)
		}
		w.cur, w.next = w.next, w.cur
	}
	frontierCost, answerCost := 0, 0
	for _, e := range w.cur {
		frontierCost += g.Degree(e)
	}
	for _, a := range ans {
		if w.mark[a] != w.stamp {
			answerCost += g.Degree(a)
		}
	}
	if answerCost <= frontierCost {
		for _, a := range ans {
			if w.mark[a] == w.stamp {
				continue
			}
			if !w.touches(a, heads, tails) {
				return false
			}
		}
		return true
	}
	w.next = w.next[:0]
	for _, e := range w.cur {
		w.visit(e, heads, tails)
	}
	for _, a := range ans {
		if w.mark[a] != w.stamp {
			return false
		}
	}
	return true
}

// visit marks e's unmarked neighbours and queues them in next.
func (w *walker) visit(e int32, heads, tails []int32) {
	for _, t := range w.g.Out(e) {
		if n := tails[t]; w.mark[n] != w.stamp {
			w.mark[n] = w.stamp
			w.next = append(w.next, n)
		}
	}
	for _, t := range w.g.In(e) {
		if n := heads[t]; w.mark[n] != w.stamp {
			w.mark[n] = w.stamp
			w.next = append(w.next, n)
		}
	}
}

// touches reports whether a neighbour of a is marked (reached within
// hops-1), i.e. a is within hops.
func (w *walker) touches(a int32, heads, tails []int32) bool {
	for _, t := range w.g.Out(a) {
		if w.mark[tails[t]] == w.stamp {
			return true
		}
	}
	for _, t := range w.g.In(a) {
		if w.mark[heads[t]] == w.stamp {
			return true
		}
	}
	return false
}
