package demo_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stem-kgqa/stem/demo"
	"github.com/stem-kgqa/stem/internal/shareddata"
)

// The parsers below are deliberately naive and local: the kg package is
// written in parallel, and the embedded files must stand on their own.

type triple struct{ h, r, t string }

// graph indexes triples for path checks.
type graph struct {
	triples []triple
	set     map[triple]bool
	out     map[[2]string][]string // (head, relation) -> tails in file order
	degree  map[string]int
}

func newGraph() *graph {
	return &graph{set: map[triple]bool{}, out: map[[2]string][]string{}, degree: map[string]int{}}
}

func (g *graph) add(tr triple) {
	g.triples = append(g.triples, tr)
	g.set[tr] = true
	k := [2]string{tr.h, tr.r}
	g.out[k] = append(g.out[k], tr.t)
	g.degree[tr.h]++
	g.degree[tr.t]++
}

// reach follows rels from subj and returns every entity reached, in first-seen order.
func (g *graph) reach(subj string, rels []string) []string {
	cur := []string{subj}
	for _, r := range rels {
		var next []string
		seen := map[string]bool{}
		for _, e := range cur {
			for _, t := range g.out[[2]string{e, r}] {
				if !seen[t] {
					seen[t] = true
					next = append(next, t)
				}
			}
		}
		cur = next
	}
	return cur
}

// parseKG reads head<TAB>relation<TAB>tail lines strictly: no blank or
// comment lines, no stray spaces, exactly three non-empty columns.
func parseKG(name string, data []byte) (*graph, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%s: not valid UTF-8", name)
	}
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return nil, fmt.Errorf("%s: must end with a newline", name)
	}
	g := newGraph()
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			return nil, fmt.Errorf("%s:%d: %d columns, want 3: %q", name, i+1, len(f), line)
		}
		if strings.HasPrefix(line, "#") {
			return nil, fmt.Errorf("%s:%d: comment lines are not allowed", name, i+1)
		}
		for _, s := range f {
			if s == "" || strings.TrimSpace(s) != s || strings.ContainsAny(s, " \r") {
				return nil, fmt.Errorf("%s:%d: empty field or stray whitespace in %q", name, i+1, line)
			}
		}
		tr := triple{f[0], f[1], f[2]}
		if g.set[tr] {
			return nil, fmt.Errorf("%s:%d: duplicate triple %q", name, i+1, line)
		}
		g.add(tr)
	}
	return g, nil
}

// question is one parsed PathQuestion line.
type question struct {
	text   string
	answer string   // the path's last entity
	gold   []string // the parenthesised answer list
	ents   []string // path entities, subject first
	rels   []string // path relations
}

// parseQuestion parses question<TAB>ans(g1/g2/)<TAB>s#r1#e1#...#ans#<end>#ans.
// The answer is taken from the path, so entity names that themselves contain
// parentheses (PathQuestion-Large has "PG_(USA)") split unambiguously.
func parseQuestion(line string) (question, error) {
	f := strings.Split(line, "\t")
	if len(f) != 3 {
		return question{}, fmt.Errorf("%d columns, want 3", len(f))
	}
	el := strings.Split(f[2], "#")
	n := len(el)
	if n < 5 || el[n-2] != "<end>" || el[n-1] != el[n-3] {
		return question{}, fmt.Errorf("path %q does not end in #answer#<end>#answer", f[2])
	}
	chain := el[:n-2]
	if len(chain)%2 != 1 {
		return question{}, fmt.Errorf("path %q does not alternate entity#relation", f[2])
	}
	q := question{text: f[0], answer: el[n-1]}
	for i, s := range chain {
		if s == "" {
			return question{}, fmt.Errorf("path %q has an empty element", f[2])
		}
		if i%2 == 0 {
			q.ents = append(q.ents, s)
		} else {
			q.rels = append(q.rels, s)
		}
	}
	list, ok := strings.CutPrefix(f[1], q.answer+"(")
	if !ok || !strings.HasSuffix(list, "/)") {
		return question{}, fmt.Errorf("answer field %q is not %s(gold1/gold2/)", f[1], q.answer)
	}
	q.gold = strings.Split(strings.TrimSuffix(list, "/)"), "/")
	if !slices.Contains(q.gold, q.answer) {
		return question{}, fmt.Errorf("path answer %q not in gold list %q", q.answer, f[1])
	}
	return q, nil
}

// checkPath reports the first hop of q's path that is not a triple of g.
func checkPath(g *graph, q question) error {
	for i, r := range q.rels {
		tr := triple{q.ents[i], r, q.ents[i+1]}
		if !g.set[tr] {
			return fmt.Errorf("hop %d (%s, %s, %s) is not in the graph", i+1, tr.h, tr.r, tr.t)
		}
	}
	return nil
}

func mustKG(t *testing.T) *graph {
	t.Helper()
	g, err := parseKG(demo.KGName, demo.KGBytes())
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func mustQuestions(t *testing.T) []question {
	t.Helper()
	data := demo.Questions()
	if len(data) == 0 || data[len(data)-1] != '\n' {
		t.Fatalf("%s: empty or missing final newline", demo.QuestionsName)
	}
	var qs []question
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		q, err := parseQuestion(line)
		if err != nil {
			t.Fatalf("%s:%d: %v", demo.QuestionsName, i+1, err)
		}
		qs = append(qs, q)
	}
	return qs
}

func TestKGShape(t *testing.T) {
	g := mustKG(t)
	if n := len(g.triples); n < 300 || n > 450 {
		t.Errorf("%d triples, want 300..450", n)
	}
	rels := map[string]bool{}
	for _, tr := range g.triples {
		rels[tr.r] = true
	}
	if got := len(g.triples); got != demo.NumTriples {
		t.Errorf("NumTriples = %d, file has %d", demo.NumTriples, got)
	}
	if got := len(g.degree); got != demo.NumEntities {
		t.Errorf("NumEntities = %d, file has %d", demo.NumEntities, got)
	}
	if got := len(rels); got != demo.NumRelations {
		t.Errorf("NumRelations = %d, file has %d", demo.NumRelations, got)
	}

	// The hub must dominate: at least 60 edges and more than any other entity.
	hub := g.degree[demo.Hub]
	if hub < 60 {
		t.Errorf("hub %s has %d edges, want >= 60", demo.Hub, hub)
	}
	for e, d := range g.degree {
		if e != demo.Hub && d >= hub {
			t.Errorf("%s has %d edges, not fewer than hub %s (%d)", e, d, demo.Hub, hub)
		}
	}
	if d := g.degree[demo.Sample]; d < 10 {
		t.Errorf("Sample %s has %d edges, want >= 10 for a useful neighbourhood", demo.Sample, d)
	}

	// Freebase-style ids must be present, and must not duplicate a plain
	// relation (people.person.place_of_birth next to place_of_birth).
	dotted := 0
	for r := range rels {
		i := strings.LastIndexByte(r, '.')
		if i < 0 {
			if strings.ToLower(r) != r || strings.ContainsAny(r, "- ") {
				t.Errorf("relation %q is not snake_case", r)
			}
			continue
		}
		dotted++
		if rels[r[i+1:]] {
			t.Errorf("relation %q duplicates plain relation %q", r, r[i+1:])
		}
	}
	if dotted < 2 {
		t.Errorf("%d Freebase-style relations, want >= 2", dotted)
	}
}

func TestKGFeatures(t *testing.T) {
	g := mustKG(t)
	// Each row: an entity and relation whose tail set must have the given size range.
	for _, tc := range []struct {
		name     string
		h, r     string
		min, max int
	}{
		{"film cast", "Inception", "starred_actors", 3, 5},
		{"country languages", "Switzerland", "language_spoken", 3, 5},
		{"two spouses over time", "Nicole_Kidman", "spouse", 2, 2},
		{"several capitals", "South_Africa", "capital", 3, 3},
		{"two directors", "The_Matrix", "directed_by", 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := g.out[[2]string{tc.h, tc.r}]
			if len(got) < tc.min || len(got) > tc.max {
				t.Errorf("(%s, %s) has %d tails %v, want %d..%d", tc.h, tc.r, len(got), got, tc.min, tc.max)
			}
		})
	}

	// Required triples: the 3-hop chain and the parallel edges.
	for _, tr := range []triple{
		{"Inception", "directed_by", "Christopher_Nolan"},
		{"Christopher_Nolan", "place_of_birth", "London"},
		{"London", "located_in", "United_Kingdom"},
		{"Inception", "written_by", "Christopher_Nolan"},
		{"Inception", "release_year", "2010"},
	} {
		if !g.set[tr] {
			t.Errorf("missing triple (%s, %s, %s)", tr.h, tr.r, tr.t)
		}
	}
	if got := g.reach("Inception", []string{"directed_by", "place_of_birth", "located_in"}); !slices.Equal(got, []string{"United_Kingdom"}) {
		t.Errorf("3-hop chain from Inception reaches %v, want exactly [United_Kingdom]", got)
	}

	// Literal-ish tails: every year is four digits.
	years := 0
	for _, tr := range g.triples {
		if tr.r != "release_year" && tr.r != "publication_year" {
			continue
		}
		years++
		if len(tr.t) != 4 || strings.Trim(tr.t, "0123456789") != "" {
			t.Errorf("(%s, %s) tail %q is not a year", tr.h, tr.r, tr.t)
		}
	}
	if years < 5 {
		t.Errorf("%d year triples, want >= 5", years)
	}
}

func TestQuestions(t *testing.T) {
	g := mustKG(t)
	qs := mustQuestions(t)
	if len(qs) < 25 || len(qs) > 40 {
		t.Errorf("%d questions, want 25..40", len(qs))
	}
	hops := map[int]int{}
	multi := 0
	seen := map[string]bool{}
	for i, q := range qs {
		where := fmt.Sprintf("%s:%d", demo.QuestionsName, i+1)
		if seen[q.text] {
			t.Errorf("%s: duplicate question %q", where, q.text)
		}
		seen[q.text] = true
		if err := checkPath(g, q); err != nil {
			t.Errorf("%s: %v", where, err)
		}
		subj := q.ents[0]
		if mention := strings.ToLower(strings.ReplaceAll(subj, "_", " ")); !strings.Contains(q.text, mention) {
			t.Errorf("%s: question %q does not mention subject %q as %q", where, q.text, subj, mention)
		}
		// The gold list must be exactly what the relation path reaches from the subject.
		want := g.reach(subj, q.rels)
		if !sameSet(q.gold, want) {
			t.Errorf("%s: gold %v, but %s#%s reaches %v", where, q.gold, subj, strings.Join(q.rels, "#"), want)
		}
		hops[len(q.rels)]++
		if len(q.gold) > 1 {
			multi++
		}
	}
	for h := 1; h <= 3; h++ {
		if hops[h] == 0 {
			t.Errorf("no %d-hop question", h)
		}
	}
	if multi < 5 {
		t.Errorf("%d multi-answer questions, want >= 5", multi)
	}
	t.Logf("%d questions: hops %v, %d multi-answer", len(qs), hops, multi)
}

func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y) && len(slices.Compact(x)) == len(a)
}

func TestParseQuestionRejects(t *testing.T) {
	for _, tc := range []struct{ name, line string }{
		{"two columns", "who ?\tA(A/)"},
		{"no end marker", "who ?\tB(B/)\tA#r#B"},
		{"end answer differs", "who ?\tB(B/)\tA#r#B#<end>#C"},
		{"answer field prefix", "who ?\tC(B/)\tA#r#B#<end>#B"},
		{"answer not in gold", "who ?\tB(C/)\tA#r#B#<end>#B"},
		{"no trailing slash", "who ?\tB(B)\tA#r#B#<end>#B"},
		{"dangling relation", "who ?\tB(B/)\tA#r#s#B#<end>#B"},
		{"empty element", "who ?\tB(B/)\tA##B#<end>#B"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if q, err := parseQuestion(tc.line); err == nil {
				t.Errorf("parseQuestion(%q) = %+v, want error", tc.line, q)
			}
		})
	}
	q, err := parseQuestion("what is x ?\tPG_(USA)(PG_(USA)/R/)\tF#rating#PG_(USA)#<end>#PG_(USA)")
	if err != nil {
		t.Fatal(err)
	}
	if q.answer != "PG_(USA)" || !slices.Equal(q.gold, []string{"PG_(USA)", "R"}) || !slices.Equal(q.rels, []string{"rating"}) {
		t.Errorf("parenthesised name parsed as %+v", q)
	}
}

func TestParseKGRejects(t *testing.T) {
	for _, tc := range []struct{ name, data string }{
		{"comment", "# note\tx\ty\n"},
		{"two columns", "a\tb\n"},
		{"four columns", "a\tb\tc\td\n"},
		{"empty field", "a\t\tc\n"},
		{"blank line", "a\tb\tc\n\n"},
		{"stray space", "a \tb\tc\n"},
		{"duplicate", "a\tb\tc\na\tb\tc\n"},
		{"no final newline", "a\tb\tc"},
		{"bad utf8", "a\tb\t\xff\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseKG("x.tsv", []byte(tc.data)); err == nil {
				t.Errorf("parseKG(%q) succeeded, want error", tc.data)
			}
		})
	}
}

// TestFormatMatchesPathQuestion runs the same question parser, path check and
// gold-set rule over the real PathQuestion files, so the embedded file's
// format and answer semantics cannot drift from PathQuestion's.
func TestFormatMatchesPathQuestion(t *testing.T) {
	for _, tc := range []struct{ questions, kb string }{
		{"pathquestion/PQ-2H.txt", "pathquestion/2H-kb.txt"},
		{"pathquestion/PQ-3H.txt", "pathquestion/3H-kb.txt"},
	} {
		t.Run(tc.questions, func(t *testing.T) {
			kbData, err := os.ReadFile(shareddata.Path(t, tc.kb))
			if err != nil {
				t.Fatal(err)
			}
			g := newGraph()
			for _, line := range strings.Split(strings.TrimSpace(string(kbData)), "\n") {
				f := strings.Split(line, "\t")
				if len(f) == 3 {
					g.add(triple{f[0], f[1], f[2]})
				}
			}
			qf, err := os.Open(shareddata.Path(t, tc.questions))
			if err != nil {
				t.Fatal(err)
			}
			defer qf.Close()
			sc := bufio.NewScanner(qf)
			n := 0
			for sc.Scan() {
				n++
				q, err := parseQuestion(sc.Text())
				if err == nil {
					err = checkPath(g, q)
				}
				// PathQuestion's gold list is the full reach from the subject,
				// the same rule TestQuestions holds the embedded file to.
				if want := g.reach(q.ents[0], q.rels); err == nil && !sameSet(q.gold, want) {
					err = fmt.Errorf("gold %v, reach %v", q.gold, want)
				}
				if err != nil {
					t.Fatalf("%s:%d: %v", tc.questions, n, err)
				}
			}
			if err := sc.Err(); err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				t.Fatalf("%s: no questions", tc.questions)
			}
		})
	}
}

func TestAccessorsReturnFreshCopies(t *testing.T) {
	want := demo.KGBytes()
	b := demo.KGBytes()
	b[0] = '!'
	got, err := io.ReadAll(demo.KG())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) || !bytes.Equal(demo.KGBytes(), want) {
		t.Error("mutating a KGBytes result changed what later callers read")
	}
	q := demo.Questions()
	q[0] = '!'
	if demo.Questions()[0] == '!' {
		t.Error("mutating a Questions result changed what later callers read")
	}
}
