package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/eval"
)

// entry is a configuration whose per-question hits are given as a string
// of 0s and 1s over questions q1, q2, ...
func entry(name, hits string) Entry {
	rep := &eval.Report{}
	for i, h := range hits {
		if h == '-' { // not answered (a partial run)
			continue
		}
		r := eval.Result{ID: fmt.Sprintf("q%d", i+1)}
		if h == '1' {
			r.Hit = 1
		}
		rep.Questions = append(rep.Questions, r)
	}
	return Entry{Name: name, Report: rep}
}

func TestAgree(t *testing.T) {
	cases := []struct {
		name    string
		entries []Entry
		want    string // n all none; name:count:ids ...
	}{
		{"three strategies", []Entry{entry("stem", "11100"), entry("simgrag", "10110"), entry("gcr", "10001")},
			"5 1 0; stem:1:q2; simgrag:1:q4; gcr:1:q5"},
		{"a question one run did not answer is left out", []Entry{entry("a", "1-0"), entry("b", "110")},
			"2 1 1; a:0:; b:0:"},
		{"two alike", []Entry{entry("a", "1100"), entry("b", "1100")}, "4 2 2; a:0:; b:0:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := Agree(tc.entries)
			if a == nil {
				t.Fatal("nil agreement")
			}
			var parts []string
			for _, al := range a.Alone {
				parts = append(parts, fmt.Sprintf("%s:%d:%s", al.Name, al.Count, strings.Join(al.IDs, ",")))
			}
			got := fmt.Sprintf("%d %d %d; %s", a.N, a.All, a.None, strings.Join(parts, "; "))
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	if Agree([]Entry{entry("alone", "1")}) != nil || Agree([]Entry{{Name: "no questions", Report: &eval.Report{}}, entry("a", "1")}) != nil {
		t.Error("an agreement of fewer than two runs with per-question results")
	}
}
