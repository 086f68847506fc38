package simgrag

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/llm/llmtest"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/stem-kgqa/stem/peers/signals"
	"github.com/stem-kgqa/stem/peers/signals/signalstest"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/schema"
)

// unit returns the 2-d unit vector whose cosine with (1, 0) is cos.
func unit(cos float64) []float32 {
	return []float32{float32(cos), float32(math.Sqrt(1 - cos*cos)), 0, 0}
}

// cosAt returns the cosine at which two unit vectors are d apart (L2).
func cosAt(d float64) float64 { return 1 - d*d/2 }

// gsds compiles pattern sg over g and returns the GSD of its best k
// subgraphs, best first, with their answer entities.
func gsds(t *testing.T, r *Retriever, g kg.Reader, sg schema.Graph, k int) ([]float64, []string) {
	t.Helper()
	gs := &graphState{g: g, enc: r.enc}
	c, _, err := r.compile(context.Background(), gs, sg, plan.Request{Graph: g})
	if err != nil {
		t.Fatal(err)
	}
	subs, _, err := search(context.Background(), g, &c.pattern, Config{K: k})
	if err != nil {
		t.Fatal(err)
	}
	var ds []float64
	var ans []string
	for _, s := range subs {
		ds = append(ds, s.GSD)
		ans = append(ans, g.EntityName(s.Nodes[c.answer]))
	}
	return ds, ans
}

// Example 1 (section 4.2): the pattern's known node and relation sit
// 0.4 and 0.6 from their matches in the KG (figure 2's per-term values
// are not in the text; their sum is), so by eq. 2 the GSD is 1.0: the
// sum of L2 distances, not of 1 - cosine (which would give 0.26).
func TestGSDExample1(t *testing.T) {
	g, err := kg.GraphOf([][3]string{{"Georgian architecture", "architectural style of", "Alan B. Miller Hall"}})
	if err != nil {
		t.Fatal(err)
	}
	enc := signalstest.New(4, map[string][]float32{
		"georgian":               unit(1),
		"georgian architecture":  unit(cosAt(0.4)),
		"architecture style":     unit(1),
		"architectural style of": unit(cosAt(0.6)),
	})
	r, err := New(context.Background(), plan.Env{Encoder: enc}, Config{K: 1, KNodes: 16, KRelations: 16})
	if err != nil {
		t.Fatal(err)
	}
	d, ans := gsds(t, r, g, schema.Graph{Triples: []schema.Triple{{Head: "Georgian", Rel: "architecture style", Tail: "[ENT1]"}}, Answer: "[ENT1]"}, 1)
	if len(d) != 1 || math.Abs(d[0]-1.0) > 1e-6 || ans[0] != "Alan B. Miller Hall" {
		t.Errorf("GSD %v (%v), want 1.0", d, ans)
	}
}

// A ranking where L2 (eq. 2) and 1 - cosine disagree: the subgraph at e1
// has two terms 0.2 off in cosine (1 - cos 0.4, L2 1.26), the one at e2
// one term 0.5 off and an exact relation (1 - cos 0.5, L2 1.0). By eq. 2
// e2's answer comes first.
func TestGSDIsL2(t *testing.T) {
	g, err := kg.GraphOf([][3]string{{"e1", "r", "x1"}, {"e2", "s", "x2"}})
	if err != nil {
		t.Fatal(err)
	}
	enc := signalstest.New(4, map[string][]float32{
		"a": unit(1), "q": unit(1),
		"e1": unit(0.8), "r": unit(0.8),
		"e2": unit(0.5), "s": unit(1),
	})
	r, err := New(context.Background(), plan.Env{Encoder: enc}, Config{K: 2, KNodes: 2, KRelations: 2})
	if err != nil {
		t.Fatal(err)
	}
	d, ans := gsds(t, r, g, schema.Graph{Triples: []schema.Triple{{Head: "a", Rel: "q", Tail: "[ENT1]"}}, Answer: "[ENT1]"}, 2)
	if !slices.Equal(ans, []string{"x2", "x1"}) || math.Abs(d[0]-1) > 1e-6 || math.Abs(d[1]-2*math.Sqrt(0.4)) > 1e-6 {
		t.Errorf("subgraphs %v with GSD %v, want x2 (1.0) before x1 (1.26)", ans, d)
	}
	if oneMinusCos := [2]float64{0.2 + 0.2, 0.5}; oneMinusCos[0] >= oneMinusCos[1] {
		t.Error("the case does not separate the two distances")
	}
}

// SimGRAG takes no oracle entities (appendix D): a linked mention still
// gets its top-k(n) candidates, so a better-matching subgraph at a
// similarly named entity can win.
func TestLinkedEntityHasCandidates(t *testing.T) {
	g, err := kg.GraphOf([][3]string{{"heat", "directed_by", "michael_mann"}, {"heat 1986", "written_by", "william_goldman"}})
	if err != nil {
		t.Fatal(err)
	}
	enc := signalstest.New(4, map[string][]float32{
		"heat": unit(1), "heat 1986": unit(0.95),
		"written by": unit(1), "directed by": unit(0.1),
	})
	r, err := New(context.Background(), plan.Env{Graph: g, Encoder: enc}, Config{K: 1, KNodes: 16, KRelations: 16, PlanWeight: 1})
	if err != nil {
		t.Fatal(err)
	}
	heat, _ := g.Entity("heat")
	req := plan.Request{Question: "who wrote heat", Graph: g, Anchors: []int32{heat}, Mentions: []string{"heat"},
		Projection: projection.Projection{Candidates: []projection.Candidate{{Graph: schema.Path("heat", "written_by")}}}}
	ev, err := r.Retrieve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(ev.Trace.Answers); !slices.Equal(got, []string{"william_goldman"}) {
		t.Errorf("answers %v, want the candidate heat 1986's writer", got)
	}
}

// Standing alone with the pattern from KG paths (--simgrag-pattern kg),
// the pattern is the relation path whose words the question is nearest,
// from the question's entity; another plan and
// strategy in the request change nothing.
func TestStandInPattern(t *testing.T) {
	g := films(t)
	enc := signalstest.New(4, map[string][]float32{
		"what is the nationality of the director of": unit(1),
		"directed by nationality":                    unit(0.99),
		"starred actors nationality":                 unit(0.5),
	})
	cfg := DefaultConfig()
	cfg.PatternFromKG = true
	r, err := New(context.Background(), plan.Env{Graph: g, Encoder: enc}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	inc, _ := g.Entity("inception")
	req := plan.Request{Question: "what is the nationality of the director of inception", Graph: g, Anchors: []int32{inc}, Mentions: []string{"inception"}}
	ev, err := r.Retrieve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(ev.Trace.Answers); len(got) == 0 || got[0] != "united_kingdom" || len(got) > 3 {
		t.Errorf("answers %v, want united_kingdom first, at most k = 3", got)
	}
	if !slices.Contains(ev.Trace.Chains, "inception -> directed_by -> christopher_nolan -> nationality -> united_kingdom") {
		t.Errorf("chains %q", ev.Trace.Chains)
	}
	other := req
	other.Projection = proj(true, schema.Breadth, schema.Path("inception", "starred_actors"))
	other.Strategy = schema.Breadth
	ev2, err := r.Retrieve(context.Background(), other)
	if err != nil || !slices.Equal(names(ev2.Trace.Answers), names(ev.Trace.Answers)) {
		t.Errorf("another plan changed a standalone result: %v, %v", err, names(ev2.Trace.Answers))
	}
	if r.UsesPlan() || r.Mode() != "standalone, encoder, pattern from KG paths" {
		t.Errorf("UsesPlan %v, mode %q", r.UsesPlan(), r.Mode())
	}
}

func TestSettings(t *testing.T) {
	// k = 3 and k(n) = k(r) = 16 for MetaQA (appendix C.1).
	if s := DefaultSettings(); s.K != 3 || s.KNodes != 16 || s.KRelations != 16 || s.LLM {
		t.Errorf("settings %+v", s)
	}
	if err := (Settings{LLM: true}).Check(false); err == nil || !strings.Contains(err.Error(), "--simgrag-llm needs --llm-model") {
		t.Errorf("Check: %v", err)
	}
}

// Tables 16 and 18 as the paper prints them, up to their examples and
// after them (typographic quotes and ellipses in ASCII).
const (
	table16Head = `You need to segment the given query then extract the potential knowledge graph structures.
Notes)
1). Use the original description in the query with enough context, NEVER use unspecific words like 'in', 'appear in', 'for', 'of' etc.
2). For nodes or relations that are unknown, you can use the keyword 'UNKNOWN' with a unique ID, e.g., 'UNKNOWN artist 1', 'UNKNOWN relation 1'.
3). Return the segmented query and extracted graph structures strictly following the format:
{ "divided": [ "segment 1", ... ], "triples": [ ("head", "relation", "tail"), ... ] }
4). NEVER provide extra descriptions or explanations, such as something like 'Here is the extracted knowledge graph structure'.
Examples)
`
	table16Tail = `Your task)
Please read and follow the above instructions and examples step by step
query: {{QUERY}}
`
	table18Head = `Please answer the question based on the given evidences from a knowledge graph.
Notes)
1). Use the original text in the valid evidences as answer output, NEVER rephrase or reformat them.
2). There may be different answers for different evidences. Return all possible answer for every evidence graph, except for those that are obviously not aligned with the query.
3). You should provide a brief reason with several words, then tell that the answer.
Examples)
`
	table18Tail = `Your task)
Please read and follow the above instructions and examples step by step
query: {{QUERY}}
evidences: {{RETRIEVED SUBGRAPHS}}
`
)

// examples splits a prompt's examples, numbered from 1, into their
// queries and what follows each query line.
func examples(t *testing.T, prompt, head, tail string) (queries, bodies []string) {
	t.Helper()
	if !strings.HasPrefix(prompt, head) || !strings.HasSuffix(prompt, tail) {
		t.Fatalf("the prompt's instructions are not the table's:\n%s", prompt)
	}
	body := strings.TrimSuffix(strings.TrimPrefix(prompt, head), tail)
	re := regexp.MustCompile(`(?m)^(\d+)\. query: "([^"]+)"\n`)
	locs := re.FindAllStringSubmatchIndex(body, -1)
	if len(locs) == 0 || locs[0][0] != 0 {
		t.Fatalf("the examples do not start with example 1: %q", body[:min(len(body), 80)])
	}
	for i, l := range locs {
		if n, _ := strconv.Atoi(body[l[2]:l[3]]); n != i+1 {
			t.Errorf("example %d is numbered %d", i+1, n)
		}
		end := len(body)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		queries = append(queries, body[l[4]:l[5]])
		bodies = append(bodies, body[l[1]:end])
	}
	return queries, bodies
}

// The prompts are the paper's tables 16 and 18 with stem's own examples,
// as many as the released code has (10 and 12), each laid out as the
// table's: every pattern example's output is a usable pattern; every
// answer example's evidences are exactly what RenderAnswer writes for
// its subgraphs, and its answer names only answers (no question entity
// or bridging entity, which the answer step would take for answers).
func TestPromptsFollowTheTables(t *testing.T) {
	qs, outs := examples(t, patternTemplate, table16Head, table16Tail)
	if len(qs) != 10 {
		t.Errorf("the pattern prompt has %d examples, want 10", len(qs))
	}
	for i, out := range outs {
		if !strings.HasPrefix(out, "output: {\n\"divided\": [\n") || !strings.HasSuffix(out, "]\n}\n") {
			t.Errorf("pattern example %d is not laid out as table 16's: %q", i+1, out)
		}
		if _, err := ParsePattern(out, qs[i]); err != nil {
			t.Errorf("pattern example %d: %v", i+1, err)
		}
	}

	qs, outs = examples(t, answerTemplate, table18Head, table18Tail)
	if len(qs) != 12 {
		t.Errorf("the answer prompt has %d examples, want 12", len(qs))
	}
	header := regexp.MustCompile(`^"graph \[(\d+)\]": \[$`)
	triple := regexp.MustCompile(`^\(("(?:[^"\\]|\\.)*"), ("(?:[^"\\]|\\.)*"), ("(?:[^"\\]|\\.)*")\),$`)
	for i, out := range outs {
		ev, ans, ok := strings.Cut(strings.TrimPrefix(out, "evidences: "), "\nanswer: ")
		if !ok || !strings.HasPrefix(out, "evidences: ") {
			t.Errorf("answer example %d has no evidences or answer: %q", i+1, out)
			continue
		}
		var graphs [][][3]string
		for _, line := range strings.Split(ev, "\n") {
			if m := header.FindStringSubmatch(line); m != nil {
				graphs = append(graphs, nil)
			} else if m := triple.FindStringSubmatch(line); m != nil && len(graphs) > 0 {
				var tr [3]string
				for k := range tr {
					tr[k], _ = strconv.Unquote(m[k+1])
				}
				graphs[len(graphs)-1] = append(graphs[len(graphs)-1], tr)
			}
		}
		if want := "\nquery: " + qs[i] + "\nevidences: " + ev + "\n"; len(graphs) == 0 || !strings.HasSuffix(RenderAnswer(qs[i], graphs), want) {
			t.Errorf("answer example %d: evidences are not RenderAnswer's layout: %q", i+1, ev)
		}
		uses := map[string]int{}
		var names []string
		for _, g := range graphs {
			for _, tr := range g {
				for _, n := range [2]string{tr[0], tr[2]} {
					if uses[n] == 0 {
						names = append(names, n)
					}
					uses[n]++
				}
			}
		}
		named := signals.Named(ans, names)
		if len(named) == 0 || !regexp.MustCompile(`^.+\. The answer is .+\.\n$`).MatchString(ans) {
			t.Errorf("answer example %d: %q does not reason, then name its answers", i+1, ans)
		}
		for _, k := range named {
			if uses[names[k]] != 1 || len(signals.Named(qs[i], []string{names[k]})) > 0 {
				t.Errorf("answer example %d names %q, which is no answer", i+1, names[k])
			}
		}
	}
}

// RenderAnswer quotes names as Go (and JSON) strings, so a name's own
// quotes and backslashes cannot end it early.
func TestRenderAnswer(t *testing.T) {
	got := RenderAnswer(" who? ", [][][3]string{{{"A", "r", `B's "C"`}}, {{"D", "s", `E\F`}}})
	want := "step by step\nquery: who?\nevidences: {\n\"graph [1]\": [\n(\"A\", \"r\", \"B's \\\"C\\\"\"),\n],\n\"graph [2]\": [\n(\"D\", \"s\", \"E\\\\F\"),\n]\n}\n"
	if !strings.HasSuffix(got, want) {
		t.Errorf("answer prompt ends %q, want %q", got[len(got)-len(want):], want)
	}
}

// Standing alone by default, the pattern is written from the question's
// words alone (the paper's data flow): the mention is the known node and
// the content words, nearest the mention first, are cut into one group
// per edge, for every length up to Hops; no KG is read.
func TestQuestionPatterns(t *testing.T) {
	for _, c := range []struct {
		q, mention string
		want       []string
	}{
		{"what is the father of mumtaz_mahal 's son ?", "mumtaz_mahal",
			[]string{"mumtaz_mahal -[son father]-> [ENT1]", "mumtaz_mahal -[son]-> [ENT1]; [ENT1] -[father]-> [ENT2]"}},
		{"which person directed the movies starred by john krasinski", "john krasinski",
			[]string{"john krasinski -[starred movies directed person]-> [ENT1]",
				"john krasinski -[starred movies]-> [ENT1]; [ENT1] -[directed person]-> [ENT2]"}},
		{"who is anna ?", "anna", nil},
	} {
		gs := questionPatterns(plan.Request{Question: c.q, Mentions: []string{c.mention}}, 2)
		var got []string
		for _, g := range gs {
			var parts []string
			for _, tr := range g.Triples {
				parts = append(parts, fmt.Sprintf("%s -[%s]-> %s", tr.Head, tr.Rel, tr.Tail))
			}
			got = append(got, strings.Join(parts, "; "))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: patterns %q, want %q", c.q, got, c.want)
		}
	}
}

// Section 4.3's example 2 ("Who is the director of the movie Tokyo
// Godfathers?", figure 3) through the default stand-in: the pattern from
// the question alone, the word-vector encoder stem ships, over a small
// KG around the film. What it answers is recorded, right or wrong, with
// the pattern it wrote.
func TestExample2StandIn(t *testing.T) {
	g := tokyoGodfathers(t)
	ctx := context.Background()
	r, err := New(ctx, plan.Env{Graph: g, Encoder: wordvec.New(nil, wordvec.Options{})}, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	req := plan.Request{Question: "Who is the director of the movie Tokyo Godfathers?", Graph: g, Mentions: []string{"Tokyo Godfathers"}}
	if ps := questionPatterns(req, 2); len(ps) != 2 || ps[0].Triples[0].Rel != "movie director" {
		t.Errorf("patterns %v, want 'movie director' first", ps)
	}
	ev, err := r.Retrieve(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(ev.Trace.Answers); len(got) == 0 || got[0] != "Satoshi Kon" {
		t.Errorf("answers %q, recorded Satoshi Kon first (chains %q)", got, ev.Trace.Chains)
	}
	if ev.Trace.Unbacked != 0 {
		t.Errorf("%d unbacked", ev.Trace.Unbacked)
	}
}

// tokyoGodfathers is a small KG around section 4.3's example 2.
func tokyoGodfathers(t *testing.T) *kg.Graph {
	t.Helper()
	g, err := kg.GraphOf([][3]string{
		{"Tokyo Godfathers", "directed_by", "Satoshi Kon"},
		{"Tokyo Godfathers", "written_by", "Keiko Nobumoto"},
		{"Tokyo Godfathers", "release_year", "2003"},
		{"Tokyo Godfathers", "has_genre", "Animation"},
		{"Paprika", "directed_by", "Satoshi Kon"},
		{"Tokyo Story", "directed_by", "Yasujiro Ozu"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Example 2 through the LLM mode against the scripted server, as a
// contract: the pattern the paper's figure 3 draws ("Tokyo Godfathers"
// -director-> "UNKNOWN director 1") is read and matched with its unknown
// node, the answer prompt carries the matched subgraph, and the model's
// answer, an entity of it, is the answer.
func TestExample2LLM(t *testing.T) {
	g := tokyoGodfathers(t)
	isPattern := func(r llmtest.Request) bool { return strings.HasPrefix(r.Messages[0].Content, "You need to segment") }
	var answerPrompt string
	srv := llmtest.NewServer(t,
		llmtest.ScriptedReply{Match: isPattern, Content: []string{`{"divided": ["the director of the movie Tokyo Godfathers"], "triples": [("Tokyo Godfathers", "director", "UNKNOWN director 1")]}`}},
		llmtest.ScriptedReply{Match: func(r llmtest.Request) bool {
			answerPrompt = r.LastUser()
			return !isPattern(r)
		}, Content: []string{"According to graph [1], the director is Satoshi Kon."}},
	)
	cfg := DefaultConfig()
	cfg.Chat, cfg.K = llmClient(t, srv), 1
	r, err := New(context.Background(), plan.Env{Graph: g, Encoder: wordvec.New(nil, wordvec.Options{})}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := r.Retrieve(context.Background(), plan.Request{Question: "Who is the director of the movie Tokyo Godfathers?", Graph: g, Mentions: []string{"Tokyo Godfathers"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(ev.Trace.Answers); !slices.Equal(got, []string{"Satoshi Kon"}) || ev.Trace.Unbacked != 0 {
		t.Errorf("answers %q (%d unbacked), want [Satoshi Kon]", got, ev.Trace.Unbacked)
	}
	if !strings.Contains(answerPrompt, `("Tokyo Godfathers", "directed_by", "Satoshi Kon")`) {
		t.Errorf("answer prompt lacks the matched triple:\n%s", answerPrompt)
	}
	if r.Mode() != "standalone, llm" {
		t.Errorf("mode %q", r.Mode())
	}
}
