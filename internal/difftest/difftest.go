// Package difftest is stem's randomized differential testing of KG
// backends, after Go's testing/quick and Cayley's graphtest: small KGs
// generated with the shapes that broke backends before (self-loops,
// parallel edges, cycles, hubs, namesakes, CVTs), questions generated
// on them with their gold paths, and the same questions answered by
// every planner over two backends, which must give the same plans,
// answers and evidence. A disagreement is shrunk to a small Case (fewer
// triples, one question) and kept as a fixture under testdata, which
// every run replays.
//
// The package is for tests: the in-memory backends are compared by its
// own tests, the SPARQL backend by kg/sparql's.
package difftest

import (
	"bytes"
	"compress/gzip"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/linking"
	"github.com/stem-kgqa/stem/projection/pattern"
	"github.com/stem-kgqa/stem/schema"
)

// Case is a KG and questions on it: what a generator draws, and what a
// fixture keeps.
type Case struct {
	// Seed is the generator's seed (0 for a case written by hand).
	Seed uint64 `json:"seed,omitempty"`
	// Note says what the case once showed.
	Note      string       `json:"note,omitempty"`
	Triples   [][3]string  `json:"triples"`
	Questions []Question   `json:"questions"`
	Train     []Question   `json:"train,omitempty"` // the pattern planner's training questions
	Planners  []string     `json:"planners,omitempty"`
	Found     []Difference `json:"found,omitempty"`
}

// Question is a generated question: its text names its entity, and its
// gold path leads from it to the answers.
type Question struct {
	Text     string        `json:"text"`
	Entities []string      `json:"entities"`
	Gold     []schema.Step `json:"gold"`
	Answers  []string      `json:"answers"`
}

// Difference is one question two backends answered differently.
type Difference struct {
	Planner  string `json:"planner"`
	Question string `json:"question"`
	Backend  string `json:"backend"`
	Got      string `json:"got"`
	Want     string `json:"want"`
}

func (d Difference) String() string {
	return fmt.Sprintf("%s, %q over %s:\n%s\nover the reference:\n%s", d.Planner, d.Question, d.Backend, d.Got, d.Want)
}

// Planners are the planners compared: those that need no LLM.
var Planners = []string{"oracle", "pattern", "schema"}

// relations are the generated KG's relations, Freebase-shaped so that
// their words mean something to the planners.
var relations = []string{
	"people.person.nationality", "people.person.spouse", "people.person.parents", "film.film.directed_by",
	"film.performance.actor", "film.performance.film", "location.location.containedby", "music.recording.song",
	"location.country.capital", "common.topic.notable_types", "book.author.works_written", "sports.team.roster",
}

// names are the named entities drawn from: several scripts, namesakes
// that normalise alike (kg.Normalize), and names that every KG form must
// carry through escapes (quotes, percent signs, backslashes, an IRI).
var names = []string{
	"Paris", "New York", "new-york", "NEW YORK", "China", "Thailand", "James_Ma", "Li Wei", "Zürich", "Ångström",
	"東京", "Москва", "O'Brien", "AC/DC", "Nolan", "Inception", "Drama", "United States", "Bangkok", "Hanoi",
	"Maria", "Jose", "José", "Jr.", "1999", "Song of China", "Alpha", "Beta", "Gamma", "Delta",
	`100% "real"`, "Paris, Texas", `back\slash`, "http://example.org/Zed",
}

// Generate draws a case from seed: a KG of 20 to 150 triples with each
// awkward shape present with some chance, n questions on it, and training
// questions for the pattern planner.
func Generate(seed uint64, n int) Case {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	c := Case{Seed: seed, Planners: Planners}
	pool := slices.Clone(names)
	r.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	ents := pool[:8+r.IntN(len(pool)-8)]
	rels := relations[:4+r.IntN(len(relations)-4)]
	var cvts []string
	for i := range r.IntN(4) {
		cvts = append(cvts, fmt.Sprintf("m.0cvt%d", i))
	}
	seen := map[[3]string]bool{}
	add := func(h, rel, t string) {
		x := [3]string{h, rel, t}
		if !seen[x] {
			seen[x] = true
			c.Triples = append(c.Triples, x)
		}
	}
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	for range len(ents) * (1 + r.IntN(3)) {
		add(pick(ents), pick(rels), pick(ents))
	}
	if r.IntN(2) == 0 { // self-loops, walked by gold paths (PQL-2H)
		for range 1 + r.IntN(3) {
			e := pick(ents)
			add(e, pick(rels), e)
		}
	}
	if r.IntN(2) == 0 { // parallel edges
		for range 1 + r.IntN(3) {
			t := c.Triples[r.IntN(len(c.Triples))]
			add(t[0], pick(rels), t[2])
		}
	}
	if r.IntN(2) == 0 { // a cycle
		a, b, d := pick(ents), pick(ents), pick(ents)
		rel := pick(rels)
		add(a, rel, b)
		add(b, rel, d)
		add(d, rel, a)
	}
	if r.IntN(2) == 0 { // a hub: one entity with many edges of one relation
		hub, rel := pick(ents), pick(rels)
		for i := range 20 + r.IntN(60) {
			item := fmt.Sprintf("item %02d", i)
			if r.IntN(2) == 0 {
				add(hub, rel, item)
			} else {
				add(item, rel, hub)
			}
		}
	}
	for _, cvt := range cvts { // CVTs: nameless mediators between named entities
		for range 2 + r.IntN(2) {
			add(pick(ents), pick(rels), cvt)
			add(cvt, pick(rels), pick(ents))
		}
	}
	g, err := kg.GraphOf(c.Triples)
	if err != nil {
		panic(err) // the generator's own triples
	}
	c.Questions = questions(r, g, n)
	c.Train = questions(r, g, 40)
	return c
}

// questions draws up to n questions: random walks of one to three steps
// from a named entity, each answered by following its steps exactly.
func questions(r *rand.Rand, g *kg.Graph, n int) []Question {
	var out []Question
	for try := 0; len(out) < n && try < 50*n; try++ {
		start := int32(r.IntN(g.NumEntities()))
		name := g.EntityName(start)
		if kg.IsFreebaseID(name) || strings.HasPrefix(name, "item ") {
			continue
		}
		var steps []schema.Step
		at := start
		for range 1 + r.IntN(3) {
			out, in := g.Out(at), g.In(at)
			if len(out)+len(in) == 0 {
				break
			}
			if i := r.IntN(len(out) + len(in)); i < len(out) {
				t := g.Triple(out[i])
				steps = append(steps, schema.Step{Rel: g.RelationName(t.Rel), Dir: schema.Forward})
				at = t.Tail
			} else {
				t := g.Triple(in[i-len(out)])
				steps = append(steps, schema.Step{Rel: g.RelationName(t.Rel), Dir: schema.Inverse})
				at = t.Head
			}
		}
		answers := follow(g, start, steps)
		if len(steps) == 0 || len(answers) == 0 || len(answers) > 30 {
			continue
		}
		var words []string
		for _, s := range slices.Backward(steps) {
			rel := s.Rel[strings.LastIndexByte(s.Rel, '.')+1:]
			words = append(words, strings.ReplaceAll(rel, "_", " "))
		}
		out = append(out, Question{Text: "what is the " + strings.Join(words, " of the ") + " of " + name + " ?", Entities: []string{name}, Gold: steps, Answers: answers})
	}
	return out
}

// follow returns the named entities steps lead to from start.
func follow(g *kg.Graph, start int32, steps []schema.Step) []string {
	front := []int32{start}
	for _, s := range steps {
		rel, _ := g.Relation(s.Rel)
		next := map[int32]bool{}
		for _, e := range front {
			if s.Dir == schema.Forward {
				for _, t := range g.OutRel(e, rel) {
					next[g.Triple(t).Tail] = true
				}
			} else {
				for _, t := range g.InRel(e, rel) {
					next[g.Triple(t).Head] = true
				}
			}
		}
		front = front[:0]
		for e := range next {
			front = append(front, e)
		}
	}
	var out []string
	for _, e := range front {
		if n := g.EntityName(e); !kg.IsFreebaseID(n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// Backend is a KG a case is answered over, built from the case's triples.
type Backend struct {
	Name string
	Open func(c Case) (kg.Reader, error)
}

// Compare answers c's questions with each of c's planners over ref and
// over every other backend, and returns the differences from ref.
func Compare(ctx context.Context, enc models.Encoder, c Case, ref Backend, others ...Backend) ([]Difference, error) {
	var model *pattern.Model
	if slices.Contains(c.Planners, "pattern") && len(c.Train) > 0 {
		var exs []pattern.Example
		for _, q := range c.Train {
			exs = append(exs, pattern.Example{Question: q.Text, Mentions: linking.Mentions(q.Text, q.Entities), Paths: [][]schema.Step{q.Gold}, Answers: len(q.Answers)})
		}
		var err error
		if model, err = pattern.Train(ctx, enc, exs, pattern.Options{Epochs: 5, Seed: 1}); err != nil {
			return nil, fmt.Errorf("difftest: train the pattern planner: %w", err)
		}
	}
	answer := func(b Backend) (map[string][]string, error) {
		g, err := b.Open(c)
		if err != nil {
			return nil, fmt.Errorf("difftest: open %s: %w", b.Name, err)
		}
		out := map[string][]string{}
		for _, name := range c.Planners {
			s := plan.DefaultSettings()
			s.Planner = plan.PlannerName(name)
			a := plan.Assets{Graph: g, Encoder: enc}
			if name == "pattern" {
				if model == nil {
					continue
				}
				pl, err := pattern.New(model, enc, pattern.Config{Graph: g})
				if err != nil {
					return nil, fmt.Errorf("difftest: %s: pattern planner: %w", b.Name, err)
				}
				s.Planner, a.AutoPlanner = "auto", pl
			}
			p, closeP, err := plan.Open(ctx, s, a)
			if err != nil {
				return nil, fmt.Errorf("difftest: %s: open the %s pipeline: %w", b.Name, name, err)
			}
			for _, q := range c.Questions {
				res, err := p.Answer(ctx, plan.Query{Question: q.Text, Entities: q.Entities,
					Gold: &projection.Gold{Paths: []schema.GoldPath{{Steps: q.Gold}}, Answers: len(q.Answers)}})
				out[name] = append(out[name], describe(res, err))
			}
			closeP()
		}
		return out, nil
	}
	want, err := answer(ref)
	if err != nil {
		return nil, err
	}
	// A question whose entity the KG lacks is not compared: over the
	// whole KG in memory tracing anchors its name by similarity among
	// every entity, which a KG answered by neighbourhoods cannot.
	g, err := ref.Open(c)
	if err != nil {
		return nil, err
	}
	asked := make([]bool, len(c.Questions))
	for i, q := range c.Questions {
		asked[i] = true
		for _, e := range q.Entities {
			if _, ok := g.Entity(e); !ok {
				asked[i] = false
			}
		}
	}
	var diffs []Difference
	for _, b := range others {
		got, err := answer(b)
		if err != nil {
			return nil, err
		}
		for _, name := range c.Planners {
			for i, q := range c.Questions {
				if asked[i] && i < len(got[name]) && got[name][i] != want[name][i] {
					diffs = append(diffs, Difference{Planner: name, Question: q.Text, Backend: b.Name, Got: got[name][i], Want: want[name][i]})
				}
			}
		}
	}
	return diffs, nil
}

// describe writes what a backend's answer is compared by: the plans and
// strategy, the answers with their scores and the evidence, in order.
func describe(res *plan.Result, err error) string {
	if err != nil {
		return "error"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "strategy %s\n", res.Strategy)
	for _, c := range res.Projection.Candidates {
		fmt.Fprintf(&b, "plan %.4f %v\n", c.Score, c.Graph.Triples)
	}
	for _, a := range res.Answers {
		fmt.Fprintf(&b, "answer %s %.4f\n", a.Name, a.Score)
	}
	for i, t := range res.EvidenceTriples() {
		fmt.Fprintf(&b, "evidence %v %.4f\n", t, res.Evidence.Evidence[i].TScore)
	}
	return b.String()
}

// Shrink returns a smaller case that still fails: one failing question
// (with its planner), then as few triples as keep it failing, removed in
// halving chunks (delta debugging). fails reports whether a case fails.
func Shrink(c Case, fails func(Case) bool) Case {
	if len(c.Found) > 0 {
		// The first difference's question and planner alone.
		d := c.Found[0]
		one := c
		one.Planners = []string{d.Planner}
		one.Questions = nil
		for _, q := range c.Questions {
			if q.Text == d.Question {
				one.Questions = []Question{q}
			}
		}
		if fails(one) {
			c = one
		}
	}
	c.Triples = shrinkList(c.Triples, func(ts [][3]string) bool {
		try := c
		try.Triples = ts
		return len(ts) > 0 && fails(try)
	})
	// The training questions matter to the pattern planner alone.
	c.Train = shrinkList(c.Train, func(qs []Question) bool {
		try := c
		try.Train = qs
		return fails(try)
	})
	return c
}

// shrinkList removes chunks of xs, halving their size, while the rest
// still fails.
func shrinkList[T any](xs []T, fails func([]T) bool) []T {
	for chunk := max(1, len(xs)); ; chunk /= 2 {
		for lo := 0; lo < len(xs); {
			try := append(slices.Clone(xs[:lo]), xs[min(lo+chunk, len(xs)):]...)
			if fails(try) {
				xs = try
			} else {
				lo += chunk
			}
		}
		if chunk == 1 {
			return xs
		}
	}
}

//go:embed testdata
var fixtures embed.FS

// Fixtures returns the kept cases, testdata/*.json: failures found
// before, shrunk, which every run replays.
func Fixtures() ([]Case, error) {
	paths, err := fs.Glob(fixtures, "testdata/*.json")
	if err != nil {
		return nil, err
	}
	var out []Case
	for _, p := range paths {
		data, err := fixtures.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var c Case
		if err := json.Unmarshal(data, &c); err != nil {
			return nil, fmt.Errorf("difftest: fixture %s: %w", path.Base(p), err)
		}
		if c.Note == "" {
			c.Note = path.Base(p)
		}
		out = append(out, c)
	}
	return out, nil
}

// TSV is the case's KG as a TSV file's text, in the generator's order.
func (c Case) TSV() string {
	var b strings.Builder
	for _, t := range c.Triples {
		b.WriteString(t[0] + "\t" + t[1] + "\t" + t[2] + "\n")
	}
	return b.String()
}

// The in-memory backends: the KG read from its TSV file, its snapshot,
// the same triples numbered in reverse, its N-Triples export read back,
// the snapshot kg build makes of that export gzipped, the KG written in
// Freebase's shape and read as a Freebase dump, and each question's
// neighbourhood fetched from the file's graph, as a SPARQL endpoint is
// answered.
var (
	File = Backend{"file", func(c Case) (kg.Reader, error) {
		return kg.ReadTSV(strings.NewReader(c.TSV()), "case.tsv")
	}}
	Snapshot = Backend{"snapshot", func(c Case) (kg.Reader, error) {
		g, err := kg.ReadTSV(strings.NewReader(c.TSV()), "case.tsv")
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		if err := kg.EncodeSnapshot(&b, g); err != nil {
			return nil, err
		}
		return kg.DecodeSnapshot(b.Bytes(), "case.stemkg")
	}}
	Reversed = Backend{"numbered in reverse", func(c Case) (kg.Reader, error) {
		b := kg.NewBuilder()
		for _, t := range slices.Backward(c.Triples) {
			b.Add(t[0], t[1], t[2])
		}
		return b.Build()
	}}
	NTriples = Backend{"N-Triples", func(c Case) (kg.Reader, error) {
		g, err := kg.ReadTSV(strings.NewReader(c.TSV()), "case.tsv")
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		if _, err := kg.WriteNTriples(context.Background(), &b, g, ""); err != nil {
			return nil, err
		}
		return kg.ReadNTriples(&b, "case.nt")
	}}
	Freebase = Backend{"Freebase's shape", func(c Case) (kg.Reader, error) {
		g, err := kg.ReadTSV(strings.NewReader(c.TSV()), "case.tsv")
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		if _, err := kg.WriteFreebase(context.Background(), &b, g); err != nil {
			return nil, err
		}
		return kg.LoadReader(context.Background(), &b, "case.nt", kg.FormatFreebase)
	}}
	Built = Backend{"kg build of .nt.gz", func(c Case) (kg.Reader, error) {
		g, err := kg.ReadTSV(strings.NewReader(c.TSV()), "case.tsv")
		if err != nil {
			return nil, err
		}
		forms, err := Forms(context.Background(), g, "", []string{"kg build kg.nt.gz"}, 0)
		if err != nil {
			return nil, err
		}
		return forms["kg build kg.nt.gz"], nil
	}}
	Neighbourhoods = Backend{"neighbourhoods", func(c Case) (kg.Reader, error) {
		g, err := kg.ReadTSV(strings.NewReader(c.TSV()), "case.tsv")
		if err != nil {
			return nil, err
		}
		return Fetching{g}, nil
	}}
)

// FormNames are the forms Forms writes a KG in and reads it back from.
var FormNames = []string{"kg.tsv", "kg.nt", "kg.nt.gz", "freebase.nt", "kg.stemkg", "kg build kg.tsv", "kg build kg.nt.gz", "kg build freebase.nt"}

// Forms writes g in the forms stem writes, in a scratch folder under dir
// ("" for the system's), and reads each back as stem reads it: a TSV
// file, N-Triples, gzipped N-Triples, Freebase's dump shape
// (kg.WriteFreebase), a snapshot, and the snapshots kg build makes of
// the TSV, the gzipped N-Triples and the Freebase-shaped file. want names
// the forms to make (FormNames when nil); kg build holds buildMemory
// bytes (kg.MinBuildMemory when 0, which spills a KG's names beyond a few
// thousand). The scratch folder is removed.
func Forms(ctx context.Context, g *kg.Graph, dir string, want []string, buildMemory int64) (map[string]*kg.Graph, error) {
	if want == nil {
		want = FormNames
	}
	tmp, err := os.MkdirTemp(dir, "forms-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var tsv, nt, fb, snap, gz bytes.Buffer
	if _, err := kg.WriteTSV(ctx, &tsv, g); err != nil {
		return nil, err
	}
	if _, err := kg.WriteFreebase(ctx, &fb, g); err != nil {
		return nil, err
	}
	if _, err := kg.WriteNTriples(ctx, &nt, g, ""); err != nil {
		return nil, err
	}
	if err := kg.EncodeSnapshot(&snap, g); err != nil {
		return nil, err
	}
	zw := gzip.NewWriter(&gz)
	zw.Write(nt.Bytes())
	if err := zw.Close(); err != nil {
		return nil, err
	}
	for name, data := range map[string][]byte{"kg.tsv": tsv.Bytes(), "kg.nt": nt.Bytes(), "kg.nt.gz": gz.Bytes(), "freebase.nt": fb.Bytes(), "kg.stemkg": snap.Bytes()} {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			return nil, err
		}
	}
	out := map[string]*kg.Graph{}
	for _, form := range want {
		path := filepath.Join(tmp, form)
		if in, ok := strings.CutPrefix(form, "kg build "); ok {
			path = filepath.Join(tmp, in+".stemkg")
			if _, err := kg.BuildSnapshot(ctx, filepath.Join(tmp, in), path, kg.BuildOptions{MaxMemory: max(buildMemory, kg.MinBuildMemory)}); err != nil {
				return nil, fmt.Errorf("difftest: %s: %w", form, err)
			}
		}
		back, err := kg.Load(ctx, path, kg.FormatAuto)
		if err != nil {
			return nil, fmt.Errorf("difftest: read %s: %w", form, err)
		}
		out[form] = back
	}
	return out, nil
}

// Fetching answers over an in-memory KG as over an endpoint: each
// question over its neighbourhood (kg.Neighbourhood).
type Fetching struct{ *kg.Graph }

// Neighbourhood implements kg.Neighbourhooder.
func (f Fetching) Neighbourhood(ctx context.Context, seeds []string, hops int) (*kg.Graph, error) {
	return kg.Neighbourhood(ctx, f.Graph, seeds, hops)
}

// Check compares c over ref and others and, when they differ, shrinks c
// to a failing case as small as it can, reports it as a fixture and, when
// keepDir is set, writes it there (a kg/sparql run passes
// internal/difftest/testdata).
func Check(t testing.TB, enc models.Encoder, c Case, keepDir string, ref Backend, others ...Backend) {
	t.Helper()
	ctx := context.Background()
	diffs, err := Compare(ctx, enc, c, ref, others...)
	if err != nil {
		t.Fatalf("seed %d: %v", c.Seed, err)
	}
	if len(diffs) == 0 {
		return
	}
	c.Found = diffs
	small := Shrink(c, func(try Case) bool {
		d, err := Compare(ctx, enc, try, ref, others...)
		return err == nil && len(d) > 0
	})
	small.Found, _ = Compare(ctx, enc, small, ref, others...)
	small.Found = small.Found[:min(1, len(small.Found))]
	data, _ := json.MarshalIndent(small, "", "  ")
	t.Errorf("seed %d: %d differences, the first: %v\nshrunk to %d triples and %d questions:\n%s", c.Seed, len(diffs), diffs[0], len(small.Triples), len(small.Questions), data)
	if keepDir != "" {
		p := filepath.Join(keepDir, fmt.Sprintf("seed-%d.json", c.Seed))
		if err := os.WriteFile(p, append(data, '\n'), 0o644); err != nil {
			t.Error(err)
		} else {
			t.Logf("kept as %s", p)
		}
	}
}
