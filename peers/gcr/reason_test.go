package gcr

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/models/llm/llmtest"
	"github.com/stem-kgqa/stem/schema"
	"github.com/stem-kgqa/stem/tracing"
)

// TestReason drives the graph inductive reasoning step against the
// scripted server: the prompt it sends, the answers it keeps, and what it
// does with replies that name no hypothesis or fail.
func TestReason(t *testing.T) {
	cases := []struct {
		name     string
		reply    llmtest.ScriptedReply
		want     []string
		problem  string
		wantErr  string
		deadline time.Duration
	}{
		{name: "chooses among the hypotheses", reply: llmtest.ScriptedReply{Content: []string{`["Mumtaz Mahal"]`}},
			want: []string{"mumtaz_mahal"}},
		{name: "drops an answer no path reaches", reply: llmtest.ScriptedReply{Content: []string{"- shah_jahan\n- Akbar"}},
			want: []string{"shah_jahan"}, problem: "dropped: Akbar"},
		{name: "names none: the vote decides", reply: llmtest.ScriptedReply{Content: []string{"I cannot tell."}},
			want: nil, problem: "the vote chose"},
		{name: "a stalled server fails the question", reply: llmtest.ScriptedReply{Delay: 5 * time.Second, Content: []string{"x"}},
			deadline: 50 * time.Millisecond, wantErr: "inductive reasoning"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := mughals(t)
			s := llmtest.NewServer(t, tc.reply)
			r := newOn(t, g, Config{Reason: newLLM(t, s, 10*time.Second), BreadthFloor: 0.01})
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			req := sonsFatherRequest(t, g)
			req.Strategy = schema.Breadth
			ev, err := r.Retrieve(ctx, req)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), sonsFather) {
					t.Fatalf("error %v, want one naming the question and %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == nil { // what the vote alone chooses
				alone, err := newOn(t, g, Config{BreadthFloor: 0.01}).Retrieve(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				want = answerNames(alone.Trace.Answers)
			}
			got := answerNames(ev.Trace.Answers)
			if len(got) == 0 || !slices.Equal(got, want) || ev.Trace.Unbacked != 0 {
				t.Errorf("answers %q (unbacked %d), want %q", got, ev.Trace.Unbacked, want)
			}
			if p := strings.Join(ev.Trace.Problems, "; "); !strings.Contains(p, tc.problem) {
				t.Errorf("problems %q, want %q", p, tc.problem)
			}
			reqs := s.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			prompt := reqs[0].LastUser()
			for _, want := range []string{"Reasoning Paths:\nmumtaz_mahal -> children -> ", "Hypothesis Answers:\n", "Question:\n" + sonsFather, "return all the possible answers as a list"} {
				if !strings.Contains(prompt, want) {
					t.Errorf("prompt lacks %q:\n%s", want, prompt)
				}
			}
		})
	}
}

// answerNames returns the answers' names, sorted.
func answerNames(as []tracing.Answer) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Name)
	}
	slices.Sort(out)
	return out
}
