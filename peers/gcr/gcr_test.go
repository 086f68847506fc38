package gcr

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
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
	"github.com/stem-kgqa/stem/tracing"
)

// mughals is PathQuestion's KG around mumtaz_mahal: her son's parents
// triple is a triple of its own, apart from her children triple.
func mughals(t testing.TB) *kg.Graph {
	return signalstest.Graph(t, [][3]string{
		{"mumtaz_mahal", "children", "shah_shuja"},
		{"shah_shuja", "parents", "mumtaz_mahal"},
		{"shah_shuja", "parents", "shah_jahan"},
		{"shah_jahan", "children", "aurangzeb"},
	})
}

// stand builds GCR standing alone over enc.
func stand(t testing.TB, g kg.Reader, cfg Config, enc *signalstest.Encoder) *Retriever {
	t.Helper()
	r, err := New(context.Background(), plan.Env{Graph: g, Encoder: enc}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func names(as []tracing.Answer) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Name)
	}
	return out
}

// sonsFather is PQ-2H's "what is the father of mumtaz_mahal 's son ?",
// gold answer mumtaz_mahal; the encoder makes "children parents" the
// relation path nearest the question.
func sonsFather(t testing.TB) (*kg.Graph, plan.Request, *signalstest.Encoder) {
	g := mughals(t)
	req := plan.Request{Question: "what is the father of mumtaz_mahal 's son ?", Graph: g,
		Anchors: []int32{signalstest.Entity(t, g, "mumtaz_mahal")}, Mentions: []string{"mumtaz_mahal"}}
	enc := signalstest.New(4, map[string][]float32{
		"what is the father of 's son ?": {1, 0, 0, 0},
		"children parents":               {1, 0.2, 0, 0},
		"children":                       {0.5, 1, 0, 0},
	})
	return g, req, enc
}

// Standing alone, the decoded paths are the entity paths of the relation
// paths nearest the question, best first; their ends are the answers in
// that order, and a path may come back to the question entity by another
// triple, never straight back over the one it arrived by.
func TestRetrieveStandingAlone(t *testing.T) {
	g, req, enc := sonsFather(t)
	r := stand(t, g, DefaultConfig(), enc)
	ev, err := r.Retrieve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	res := ev.Trace
	if want := []string{"mumtaz_mahal", "shah_jahan", "shah_shuja"}; !slices.Equal(names(res.Answers), want) {
		t.Errorf("answers %q, want %q (chains %q)", names(res.Answers), want, res.Chains)
	}
	want := []string{
		"mumtaz_mahal -> children -> shah_shuja -> parents -> mumtaz_mahal",
		"mumtaz_mahal -> children -> shah_shuja -> parents -> shah_jahan",
	}
	if len(res.Chains) < 2 || !slices.Equal(res.Chains[:2], want) {
		t.Errorf("chains %q, want %q first", res.Chains, want)
	}
	for _, c := range res.Chains {
		if strings.Contains(c, "children -> shah_shuja <- children <-") {
			t.Errorf("chain %q steps back over its own triple", c)
		}
	}
	if res.Unbacked != 0 || tracing.Audit(g, res) != 0 {
		t.Errorf("%d unbacked", res.Unbacked)
	}
	if r.UsesPlan() || r.Mode() != "standalone, encoder" {
		t.Errorf("UsesPlan %v, mode %q", r.UsesPlan(), r.Mode())
	}
}

// K bounds the decoded paths, so the hypotheses too.
func TestBeamBoundsHypotheses(t *testing.T) {
	var triples [][3]string
	for i := range 30 {
		triples = append(triples, [3]string{"Drama", "genre_of", fmt.Sprintf("film%02d", i)})
	}
	g := signalstest.Graph(t, triples)
	r := stand(t, g, Config{Beam: 10}, signalstest.New(4, map[string][]float32{
		"which films are dramas": {1, 0, 0, 0}, "film17": {1, 0, 0, 0}, "film03": {0.9, 0.43, 0, 0}, "genre of": {0, 0, 0, 1}}))
	ev, err := r.Retrieve(context.Background(), plan.Request{Question: "which films are dramas", Graph: g, Anchors: []int32{signalstest.Entity(t, g, "Drama")}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(ev.Trace.Answers); n != 10 || len(ev.Trace.Chains) != 10 {
		t.Errorf("%d answers, %d chains; want K = 10", n, len(ev.Trace.Chains))
	}
	// Entity paths along one relation path tie under the stand-in: the
	// question's similarity to their ends' names orders them, not the
	// alphabet.
	if got := names(ev.Trace.Answers)[:2]; !slices.Equal(got, []string{"film17", "film03"}) {
		t.Errorf("first answers %q", got)
	}
}

// The planner-assisted mode adds the planner's paths; standing alone the
// same request with another plan and strategy gives the same result.
func TestPlanHelpIsLabelled(t *testing.T) {
	g, req, enc := sonsFather(t)
	// The planner says "children" alone (a one-hop path).
	req.Projection = projection.Projection{Unranked: true, Candidates: []projection.Candidate{{Graph: schema.Path("mumtaz_mahal", "children")}}}
	req.Strategy = schema.Breadth
	alone, err := stand(t, g, DefaultConfig(), enc).Retrieve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if names(alone.Trace.Answers)[0] != "mumtaz_mahal" {
		t.Errorf("standing alone, answers %q", names(alone.Trace.Answers))
	}
	helped := stand(t, g, Config{PlanWeight: 5}, enc)
	ev, err := helped.Retrieve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(ev.Trace.Answers); got[0] != "shah_shuja" {
		t.Errorf("planner-assisted, answers %q, want the planned path's end first", got)
	}
	if !helped.UsesPlan() || helped.Mode() != "planner-assisted w=5, encoder" {
		t.Errorf("UsesPlan %v, mode %q", helped.UsesPlan(), helped.Mode())
	}
}

// TestDecodedPathsExist is the property test: on random graphs every
// decoded path is a walk of KG triples from an anchor along a trie path,
// and no answer is unbacked.
func TestDecodedPathsExist(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	enc := wordvec.New(nil, wordvec.Options{})
	for round := range 60 {
		b := kg.NewBuilder()
		for range 1 + rng.IntN(60) {
			b.Add(fmt.Sprintf("e%d", rng.IntN(4+rng.IntN(20))), fmt.Sprintf("r%d", rng.IntN(3)), fmt.Sprintf("e%d", rng.IntN(24)))
		}
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		anchors := []int32{int32(rng.IntN(g.NumEntities()))}
		r, err := New(context.Background(), plan.Env{Encoder: enc}, Config{Hops: 1 + rng.IntN(3), Beam: 1 + rng.IntN(8), MaxReach: 8, MaxNodes: 60})
		if err != nil {
			t.Fatal(err)
		}
		trie, err := signals.Build(context.Background(), g, anchors, r.cfg.Hops, signals.Limits{MaxReach: 8, MaxNodes: 60})
		if err != nil {
			t.Fatal(err)
		}
		paths, err := r.decode(context.Background(), g, trie, plan.Request{Question: "r0 of r1", Graph: g}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(paths) > r.cfg.Beam {
			t.Fatalf("round %d: %d paths, K = %d", round, len(paths), r.cfg.Beam)
		}
		for _, p := range paths {
			if _, ok := trie.Find(p.Steps); !ok || p.Start != anchors[0] {
				t.Fatalf("round %d: path %v from %d is not a trie path from the anchor", round, p.Steps, p.Start)
			}
			at := p.Start
			for i, id := range p.Triples {
				if signals.Near(g, id, p.Steps[i]) != at || g.Triple(id).Rel != p.Steps[i].Rel {
					t.Fatalf("round %d: triple %d does not continue the walk at %d", round, id, at)
				}
				at = signals.Far(g, id, p.Steps[i])
			}
			if at != p.End {
				t.Fatalf("round %d: walk ends at %d, path says %d", round, at, p.End)
			}
		}
		ev, err := r.Retrieve(context.Background(), plan.Request{Question: "r0 of r1", Graph: g, Anchors: anchors})
		if err != nil || ev.Trace.Unbacked != 0 {
			t.Fatalf("round %d: %v, %d unbacked", round, err, ev.Trace.Unbacked)
		}
	}
}

func TestConfigAndSettings(t *testing.T) {
	if _, err := New(context.Background(), plan.Env{}, DefaultConfig()); err == nil {
		t.Error("no encoder, no LLM: no error")
	}
	if _, err := New(context.Background(), plan.Env{Encoder: signalstest.New(2, nil)}, Config{Beam: -1}); err == nil {
		t.Error("negative beam: no error")
	}
	// The paper's L = 2 (appendix F.1) and K = 10 (figure 4).
	if s := DefaultSettings(); s.Hops != 2 || s.Beam != 10 || s.LLM {
		t.Errorf("settings %+v", s)
	}
	if err := (Settings{LLM: true}).Check(false); err == nil || !strings.Contains(err.Error(), "--gcr-llm needs --llm-model") {
		t.Errorf("Check: %v", err)
	}
}

// niall is the paper's table 5 case: "Who is niall ferguson 's wife?",
// answer Ayaan Hirsi Ali through his son Thomas Ferguson.
func niall(t testing.TB) *kg.Graph {
	return signalstest.Graph(t, [][3]string{
		{"Niall Ferguson", "people.person.children", "Thomas Ferguson"},
		{"Niall Ferguson", "people.person.children", "Mabel Rose Ferguson"},
		{"Thomas Ferguson", "people.person.parents", "Ayaan Hirsi Ali"},
		{"Niall Ferguson", "people.person.profession", "Historian"},
	})
}

// favour is a fake model that prefers the table 5 path: its entity and
// relation tokens -0.1, closing the path -0.1 after Ayaan Hirsi Ali and
// -5 elsewhere, every other token -3. (The fake server splits at spaces,
// so the close is glued to the path's last word.)
func favour(before, tok string) float64 {
	if strings.HasSuffix(tok, "</PATH>") {
		if strings.HasSuffix(before+tok, "Ayaan Hirsi Ali</PATH>") {
			return -0.1
		}
		return -5
	}
	switch strings.TrimSpace(tok) {
	case "people.person.children", "people.person.parents", "Thomas", "Ferguson", "Ayaan", "Hirsi", "->":
		return -0.1
	}
	return -3
}

// The LLM mode as GCR runs it, against the scripted server with the
// paper's table 5 case: the decoding prompt names every topic entity and
// writes each path with its entities from the anchor it leaves; the
// inductive reasoning prompt holds the K paths with their hypotheses, and
// the hypotheses its reply names are the answers.
func TestLLMMode(t *testing.T) {
	g := niall(t)
	s := llmtest.NewServer(t,
		llmtest.ScriptedReply{Match: func(r llmtest.Request) bool { return r.Completion() }, Repeat: true, TokenLogprob: favour},
		llmtest.ScriptedReply{Match: func(r llmtest.Request) bool { return !r.Completion() }, Content: []string{"Ayaan Hirsi Ali"}})
	c := signalstest.Client(t, s)
	r, err := New(context.Background(), plan.Env{Graph: g}, Config{Beam: 3, LLM: c, Reason: c})
	if err != nil {
		t.Fatal(err)
	}
	req := plan.Request{Question: "Who is niall ferguson 's wife", Graph: g, Anchors: []int32{signalstest.Entity(t, g, "Niall Ferguson"), signalstest.Entity(t, g, "Historian")}}
	ev, err := r.Retrieve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(ev.Trace.Answers); !slices.Equal(got, []string{"Ayaan Hirsi Ali"}) {
		t.Errorf("answers %q (chains %q, problems %q)", got, ev.Trace.Chains, ev.Trace.Problems)
	}
	const path = "Niall Ferguson -> people.person.children -> Thomas Ferguson -> people.person.parents -> Ayaan Hirsi Ali"
	if len(ev.Trace.Chains) == 0 || ev.Trace.Chains[0] != path {
		t.Errorf("chains %q, want %q first", ev.Trace.Chains, path)
	}
	var sawDecode, sawReason bool
	for _, q := range s.Requests() {
		if q.Completion() {
			if !strings.HasPrefix(q.Prompt, DecodePrompt(req.Question, []string{"Niall Ferguson", "Historian"})) {
				t.Fatalf("decoding prompt %q", q.Prompt)
			}
			sawDecode = sawDecode || strings.HasSuffix(q.Prompt, "# Topic entities: \nNiall Ferguson,Historian\n# Reasoning Path:\n<PATH>"+path+"</PATH>")
			continue
		}
		p := q.LastUser()
		sawReason = strings.HasPrefix(p, "Reasoning Paths:\n# Reasoning Path:\n"+path+"\n# Answer:\nAyaan Hirsi Ali\n") &&
			strings.Contains(p, "\n\nQuestion:\nWho is niall ferguson 's wife?\n\nBased on the reasoning paths, please answer the given question.")
	}
	if !sawDecode || !sawReason {
		t.Errorf("decoding prompt with the path seen %v, reasoning prompt %v", sawDecode, sawReason)
	}
	if r.Mode() != "standalone, llm" {
		t.Errorf("mode %q", r.Mode())
	}
}

// A reasoning reply that names no hypothesis leaves the hypotheses and
// says so; a failed request fails the question, naming it.
func TestReasonReplies(t *testing.T) {
	g := niall(t)
	for _, tc := range []struct {
		reply   llmtest.ScriptedReply
		problem string
		err     string
	}{
		{reply: llmtest.Reply("I cannot tell."), problem: "named no hypothesis"},
		{reply: llmtest.Error(400, `{"error":{"message":"bad"}}`), err: "inductive reasoning"},
	} {
		s := llmtest.NewServer(t, tc.reply)
		c := signalstest.Client(t, s)
		r, err := New(context.Background(), plan.Env{Graph: g, Encoder: signalstest.New(2, nil)}, Config{Reason: c})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := r.Retrieve(context.Background(), plan.Request{Question: "Who is niall ferguson 's wife?", Graph: g, Anchors: []int32{signalstest.Entity(t, g, "Niall Ferguson")}})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "niall ferguson") {
				t.Errorf("error %v, want %q naming the question", err, tc.err)
			}
			continue
		}
		if err != nil || len(ev.Trace.Answers) == 0 || !strings.Contains(strings.Join(ev.Trace.Problems, "; "), tc.problem) {
			t.Errorf("%v, answers %q, problems %q", err, names(ev.Trace.Answers), ev.Trace.Problems)
		}
	}
}

// The trained stand-in (Config.Learnt) decodes the relation path its
// training pairs give the question's words, where the encoder would have
// chosen another; in the beam a first step scores the training paths it
// begins, so a beam of one still reaches a trained two-hop path.
func TestRetrieveTrained(t *testing.T) {
	g, req, enc := sonsFather(t)
	for _, c := range []struct {
		name      string
		pairs     []signals.Pair
		beam      int
		wantFirst string
	}{
		{"one hop taught", []signals.Pair{
			{Question: "what is the father of anna 's son ?", Key: "children>"},
			{Question: "what is the father of bob 's son ?", Key: "children>"},
			{Question: "who wrote the song ?", Key: "parents<"},
		}, 10, "mumtaz_mahal -> children -> shah_shuja"},
		{"two hops through a beam of one", []signals.Pair{
			{Question: "what is the father of anna 's son ?", Key: "children>parents>"},
			{Question: "who wrote the song ?", Key: "parents<"},
		}, 1, "mumtaz_mahal -> children -> shah_shuja -> parents -> "},
	} {
		cfg := DefaultConfig()
		cfg.Beam, cfg.Learnt = c.beam, signals.Train(c.pairs)
		r := stand(t, g, cfg, enc)
		ev, err := r.Retrieve(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if chains := ev.Trace.Chains; len(chains) == 0 || !strings.HasPrefix(chains[0], c.wantFirst) ||
			c.name == "one hop taught" && chains[0] != c.wantFirst {
			t.Errorf("%s: chains %q, want %q first", c.name, chains, c.wantFirst)
		}
		if r.Mode() != "standalone, encoder, trained" || ev.Trace.Unbacked != 0 {
			t.Errorf("%s: mode %q, %d unbacked", c.name, r.Mode(), ev.Trace.Unbacked)
		}
	}
}
