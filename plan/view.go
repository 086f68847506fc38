package plan

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/stem-kgqa/stem/constraint"
	"github.com/stem-kgqa/stem/generation"
	"github.com/stem-kgqa/stem/projection"
	"github.com/stem-kgqa/stem/projection/linking"
	"github.com/stem-kgqa/stem/selection"
	"github.com/stem-kgqa/stem/tracing"
)

// View is a Result as `stem ask --json` prints it (and a server returns
// it): answers, chains and timings, and with explain the whole trace.
type View struct {
	Question string              `json:"question"`
	Answers  []generation.Answer `json:"answers"`
	Chains   []string            `json:"chains"`
	Timings  map[string]Duration `json:"timings_ms"`
	// Audit is always there: a caller should never have to ask whether
	// the answers are backed by the KG.
	Audit AuditView `json:"audit"`
	// Confidence is the probability, in [0, 1], that the first answer
	// is right (plan selection's, package selection), with Calibrated
	// when it was fitted on held-out questions; absent for a retrieval
	// strategy that rates none (a peer system's).
	Confidence *float64 `json:"confidence,omitempty"`
	Calibrated bool     `json:"calibrated,omitempty"`
	// Abstained says the answer was withheld for a confidence below
	// --min-confidence, Abstain why ("best candidate 0.21 < 0.5").
	Abstained bool         `json:"abstained,omitempty"`
	Abstain   string       `json:"abstain,omitempty"`
	Explain   *ExplainView `json:"explain,omitempty"`
}

// CandidateView is one reading of the question as plan selection judged
// it, for --explain.
type CandidateView struct {
	Rank       int                `json:"rank"`
	Plan       string             `json:"plan"`
	Answers    []string           `json:"answers"`
	Bound      int                `json:"bound"`
	Features   map[string]float64 `json:"features"`
	Score      float64            `json:"score"`
	Confidence float64            `json:"confidence"`
	Chosen     bool               `json:"chosen"`
}

// candidates returns the selection's readings as views, with up to three
// answer names each.
func (s *Selection) views() []CandidateView {
	out := make([]CandidateView, 0, len(s.Candidates))
	for i, c := range s.Candidates {
		v := CandidateView{Rank: c.Rank, Plan: c.Plan, Answers: []string{}, Bound: len(c.Answers), Features: map[string]float64{},
			Score: c.Score, Confidence: c.Confidence, Chosen: i == s.Chosen}
		for _, a := range c.Answers[:min(3, len(c.Answers))] {
			v.Answers = append(v.Answers, a.Name)
		}
		for j, n := range selection.Names {
			v.Features[n] = c.Features[j]
		}
		for j, n := range selection.EvidenceNames {
			if j < len(c.Evidence) {
				v.Features[n] = c.Evidence[j]
			}
		}
		out = append(out, v)
	}
	return out
}

// ExplainView is the trace behind a View's answers.
type ExplainView struct {
	Entities []linking.Link `json:"entities"`
	// Mentions are every span that names a KG entity, the Entities' and
	// the others, with their candidates and why one won.
	Mentions []linking.Mention     `json:"mentions,omitempty"`
	Plan     projection.Projection `json:"plan"`
	Schema   []string              `json:"schema_graphs"`
	Strategy string                `json:"strategy"`
	Anchors  []tracing.Anchor      `json:"anchors"`
	Guidance []string              `json:"guidance_entities,omitempty"`
	Matched  []MatchedTripleView   `json:"matched_triples"`
	// Constraints say what each constraint the question states did to
	// the answers, or that the KG could not check it.
	Constraints []constraint.Report `json:"constraints,omitempty"`
	Problems    []string            `json:"problems,omitempty"`
	// Selection is every reading plan selection judged, with its
	// features and score.
	Selection []CandidateView `json:"selection,omitempty"`
	// Beam is the readings the planner traced per question (--beam, or
	// the selector's recorded beam); absent when the pipeline does not
	// say.
	Beam int `json:"beam,omitempty"`
	// Kept is the selector's keep decision on each answer it weighed,
	// the chosen reading's then the other readings' (selection.Model.Cut):
	// the probability that the answer is a gold one and whether it is
	// returned; absent for a selector without a keep part.
	Kept []selection.Kept `json:"kept,omitempty"`
	// Withheld are the answers a confidence below --min-confidence held
	// back.
	Withheld []string `json:"withheld,omitempty"`
}

// MatchedTripleView is one evidence triple with its scores.
type MatchedTripleView struct {
	Graph        int       `json:"graph"`
	SchemaTriple int       `json:"schema_triple"`
	Triple       [3]string `json:"triple"`
	TScore       float32   `json:"t_score"`
	Bias         float32   `json:"bias"`
	Cumulative   float32   `json:"cumulative"`
}

// AuditView is the faithfulness audit's counts.
type AuditView struct {
	Evidence int `json:"evidence_triples"`
	Answers  int `json:"answers"`
	// Unbacked counts answers no evidence backs: tracing's audit failures
	// and generated answers that name no evidence entity.
	Unbacked int `json:"unbacked"`
}

// View returns r as printed by `stem ask --json`.
func (r *Result) View(explain bool) View {
	ev := r.Evidence
	out := View{Question: r.Question, Answers: r.Answers, Chains: r.Chains, Timings: r.Timings,
		Audit: AuditView{Evidence: len(ev.Evidence), Answers: len(ev.Answers), Unbacked: r.Unsupported()}}
	if out.Answers == nil {
		out.Answers = []generation.Answer{}
	}
	if sel := r.Selection; sel != nil {
		c := sel.Confidence
		out.Confidence, out.Calibrated = &c, sel.Calibrated
	}
	out.Abstained, out.Abstain = r.Abstained, r.Abstain
	if !explain {
		return out
	}
	ex := &ExplainView{Entities: r.Links, Mentions: r.Mentions, Plan: r.Projection, Strategy: r.Strategy, Anchors: ev.Anchors, Guidance: r.Guidance,
		Constraints: r.Constraints, Problems: ev.Problems}
	if r.Selection != nil {
		ex.Selection, ex.Kept, ex.Beam = r.Selection.views(), r.Selection.Kept, r.Selection.Beam
	}
	for _, a := range r.Withheld {
		ex.Withheld = append(ex.Withheld, a.Name)
	}
	for _, gr := range r.Projection.Graphs() {
		ex.Schema = append(ex.Schema, gr.String())
	}
	names := r.EvidenceTriples()
	for i, m := range ev.Evidence {
		ex.Matched = append(ex.Matched, MatchedTripleView{Graph: m.Graph, SchemaTriple: m.SchemaTriple,
			Triple: names[i], TScore: m.TScore, Bias: m.Bias, Cumulative: m.Cum})
	}
	out.Explain = ex
	return out
}

// WriteText prints r for a person: the answers with up to maxChains
// supporting chains each (0 = all), the whole trace with explain, then the
// timings, start-up first when it is not 0 (a warm server has none).
func (r *Result) WriteText(w io.Writer, explain bool, maxChains int, startup time.Duration) {
	fmt.Fprintf(w, "Q: %s\n", r.Question)
	switch {
	case r.Abstained:
		fmt.Fprintf(w, "no answer: %s (withheld: %s)\n", r.Abstain, r.withheld())
	case len(r.Answers) == 0:
		fmt.Fprintln(w, "no answer: the KG holds no evidence that matches the question's plan")
		for _, pr := range r.Evidence.Problems {
			fmt.Fprintf(w, "  (%s)\n", pr)
		}
	}
	for i, a := range r.Answers {
		flag := ""
		if !a.Supported {
			flag = "  [UNSUPPORTED: no evidence in the KG names it]"
		}
		fmt.Fprintf(w, "%d. %s%s\n", i+1, a.Name, flag)
		chains := a.Chains
		if maxChains > 0 && len(chains) > maxChains {
			chains = chains[:maxChains]
		}
		for _, ch := range chains {
			fmt.Fprintf(w, "     %s\n", ch)
		}
		if len(chains) < len(a.Chains) {
			fmt.Fprintf(w, "     ... %d more chains\n", len(a.Chains)-len(chains))
		}
	}
	if explain {
		r.writeExplain(w)
	}
	sep := "timings: "
	if startup > 0 {
		fmt.Fprintf(w, "%sstart-up %s", sep, startup.Round(time.Millisecond))
		sep = ", "
	}
	for _, s := range []string{StageLink, StagePlan, StageGuide, StageTrace, StageConstrain, StageGenerate} {
		if d, ok := r.Timings[s]; ok {
			fmt.Fprintf(w, "%s%s %s", sep, s, time.Duration(d).Round(time.Microsecond))
			sep = ", "
		}
	}
	if r.Selection != nil && r.Selection.Chosen >= 0 {
		fmt.Fprintf(w, "; confidence %.2f", r.Selection.Confidence)
		if !r.Selection.Calibrated {
			fmt.Fprint(w, " (uncalibrated)")
		}
	}
	fmt.Fprintln(w)
}

// withheld names the answers an abstention held back, up to three.
func (r *Result) withheld() string {
	var names []string
	for _, a := range r.Withheld[:min(3, len(r.Withheld))] {
		names = append(names, a.Name)
	}
	if len(r.Withheld) > 3 {
		names = append(names, fmt.Sprintf("%d more", len(r.Withheld)-3))
	}
	return strings.Join(names, ", ")
}

func (r *Result) writeExplain(w io.Writer) {
	fmt.Fprintf(w, "\nentities:\n")
	for _, l := range r.Links {
		fmt.Fprintf(w, "  %q -> %s (%s, %.3f)\n", l.Mention, l.Entity, l.Method, l.Score)
	}
	writeMentions(w, r.Mentions)
	if r.Strategy == "" && len(r.Projection.Candidates) == 0 {
		fmt.Fprintf(w, "plan: none (the retrieval strategy plans for itself)\n")
	} else {
		fmt.Fprintf(w, "plan (strategy %s):\n", r.Strategy)
	}
	for i, cand := range r.Projection.Candidates {
		fmt.Fprintf(w, "  [%d] %.3f  %s\n", i, cand.Score, cand.Graph)
		for _, a := range cand.Assertions {
			fmt.Fprintf(w, "        %s\n", a)
		}
	}
	for _, n := range r.Projection.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	ev := r.Evidence
	fmt.Fprintf(w, "anchors:\n")
	for _, a := range ev.Anchors {
		fmt.Fprintf(w, "  %q -> %s (%.3f)\n", a.Mention, a.Name, a.Score)
	}
	if len(r.Guidance) > 0 {
		g := append([]string(nil), r.Guidance...)
		sort.Strings(g)
		fmt.Fprintf(w, "guidance entities: %s\n", strings.Join(g, ", "))
	}
	fmt.Fprintf(w, "matched triples:\n")
	names := r.EvidenceTriples()
	for i, m := range ev.Evidence {
		t := names[i]
		fmt.Fprintf(w, "  graph %d edge %d  T %.3f (bias %.2f)  S %.3f  (%s, %s, %s)\n", m.Graph, m.SchemaTriple, m.TScore, m.Bias, m.Cum, t[0], t[1], t[2])
	}
	for _, c := range r.Constraints {
		fmt.Fprintf(w, "constraint: %s\n", c.Note)
		for _, k := range c.Kinds {
			fmt.Fprintf(w, "  kind inferred: %s\n", k)
		}
	}
	fmt.Fprintf(w, "audit: %d evidence triples and %d answers checked against the KG, %d unbacked\n", len(ev.Evidence), len(ev.Answers), ev.Unbacked)
	for _, p := range ev.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
	r.Selection.writeText(w)
	fmt.Fprintln(w)
}

// writeMentions lists the question's mentions when any says more than
// the entities above: a mention beside them, or a name several entities
// share. Each shows its candidates (hops to the other mentions' entities,
// edges) and why the chosen one won.
func writeMentions(w io.Writer, ms []linking.Mention) {
	if !slices.ContainsFunc(ms, func(m linking.Mention) bool { return !m.Topic || len(m.Candidates) > 1 }) {
		return
	}
	fmt.Fprintf(w, "mentions:\n")
	for _, m := range ms {
		role := "beside the entities"
		if m.Topic {
			role = "entity"
		}
		fmt.Fprintf(w, "  %q -> %s (%s; %s)\n", m.Text, m.Entity, role, m.Why)
		if len(m.Candidates) < 2 {
			continue
		}
		var cs []string
		for _, c := range m.Candidates {
			near := "not near"
			if c.Hops > 0 {
				near = fmt.Sprintf("%d hops", c.Hops)
			}
			cs = append(cs, fmt.Sprintf("%s (%s, %d edges)", c.Entity, near, c.Degree))
		}
		fmt.Fprintf(w, "    candidates: %s\n", strings.Join(cs, ", "))
	}
}

// writeText prints every reading plan selection judged: its rank,
// score, confidence, answers and features; nothing for no selection.
func (s *Selection) writeText(w io.Writer) {
	if s == nil {
		return
	}
	how := "keeps the planner's first reading that binds answers"
	if s.Selected {
		how = "chooses the most probable reading"
	}
	if s.Beam > 0 {
		how += fmt.Sprintf("; beam %d traced", s.Beam)
	}
	fmt.Fprintf(w, "selection (%s; %s):\n", s.Model, how)
	for _, v := range s.views() {
		mark := " "
		if v.Chosen {
			mark = "*"
		}
		fmt.Fprintf(w, " %s[%d] p %.3f  confidence %.3f  %d answers %v  %s\n", mark, v.Rank, v.Score, v.Confidence, v.Bound, v.Answers, v.Plan)
		var fs []string
		for _, n := range append(slices.Clone(selection.Names), selection.EvidenceNames...) {
			fs = append(fs, fmt.Sprintf("%s %.2f", n, v.Features[n]))
		}
		fmt.Fprintf(w, "        %s\n", strings.Join(fs, ", "))
	}
	s.writeKept(w)
}

// keptCutShown is how many of the answers cut --explain names, the first
// weighed; a pool holds up to 30 a reading, and JSON's explain.kept
// lists them all.
const keptCutShown = 5

// writeKept prints the keep decision (selection.Model.Cut): each answer
// weighed, the chosen reading's then the other readings', with its
// probability of being gold, + for kept and - for cut; nothing without
// a keep part.
func (s *Selection) writeKept(w io.Writer) {
	if len(s.Kept) == 0 {
		return
	}
	n, cut := 0, 0
	var parts []string
	for _, k := range s.Kept {
		switch {
		case k.Kept:
			n++
			parts = append(parts, fmt.Sprintf("+%s %.2f", k.Name, k.P))
		case cut < keptCutShown:
			cut++
			parts = append(parts, fmt.Sprintf("-%s %.2f", k.Name, k.P))
		}
	}
	if more := len(s.Kept) - n - cut; more > 0 {
		parts = append(parts, fmt.Sprintf("%d more cut", more))
	}
	fmt.Fprintf(w, "answer set (keeps the first, then p >= %.2f): %d of %d kept: %s\n", s.KeepThreshold, n, len(s.Kept), strings.Join(parts, ", "))
}
