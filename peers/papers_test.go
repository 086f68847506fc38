package peers

import (
	"strings"
	"testing"
)

func TestReportedFigures(t *testing.T) {
	for _, c := range []struct {
		format string
		files  []string
		bench  string
		peer   string
		want   []float64
	}{
		{"metaqa", []string{"/d/metaqa/qa_test_1hop.txt"}, "MetaQA 1-hop", "simgrag", []float64{98.0}},
		{"metaqa", []string{"qa_test_2hop.txt"}, "MetaQA 2-hop", "simgrag", []float64{98.4}},
		{"pq", []string{"splits/PQ-2H.test.txt"}, "PQ-2H", "simgrag", []float64{88.7}},
		{"pq", []string{"splits/PQ-3H.test.txt"}, "PQ-3H", "simgrag", []float64{78.6}},
		{"pq", []string{"splits/PQL-2H.test.txt"}, "", "simgrag", nil},
		{"webqsp-mini", []string{"gnnrag_sbert_test.jsonl"}, "WebQSP", "gcr", []float64{92.6, 73.2, 57.0}},
		{"webqsp-mini", []string{"gnnrag_sbert_test.jsonl"}, "WebQSP", "dog", []float64{90.99}},
		{"webqsp-mini", []string{"gnnrag_sbert_test.jsonl"}, "WebQSP", "graphraft", nil},
		{"metaqa", []string{"qa_test_1hop.txt"}, "MetaQA 1-hop", "stem", nil},
	} {
		b := BenchmarkOf(c.format, c.files)
		if b != c.bench {
			t.Errorf("BenchmarkOf(%s, %v) = %q, want %q", c.format, c.files, b, c.bench)
		}
		fs := Reported(c.peer, b)
		var got []float64
		for _, f := range fs {
			got = append(got, f.Value)
			if !strings.Contains(f.String(), "table") || !strings.Contains(f.String(), "not ours") {
				t.Errorf("%s: %q names no table or passes for ours", c.peer, f)
			}
		}
		if len(got) != len(c.want) {
			t.Errorf("%s on %s: %v, want %v", c.peer, b, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s on %s: %v, want %v", c.peer, b, got, c.want)
			}
		}
	}
}
