package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/demo"
)

func TestBenchServeDemo(t *testing.T) {
	kb := writeFile(t, "kg.tsv", string(demo.KGBytes()))
	qs := writeFile(t, "questions.tsv", string(demo.Questions()))
	out, log, err := run(t, "bench", "serve", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--kg", kb,
		"--clients", "3", "--max-requests", "150", "--duration", "1m", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	var rep struct {
		Clients, Requests, Errors, Checked int
		Throughput                         float64 `json:"throughput_qps"`
		Samples                            []struct {
			RSS float64 `json:"rss_bytes"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%s", err, out)
	}
	// Every question answered in the warm-up is checked in the timed run.
	if rep.Clients != 3 || rep.Requests != 150 || rep.Errors != 0 || rep.Checked != 150 || rep.Throughput <= 0 {
		t.Errorf("report %+v: want 3 clients, 150 requests all checked, no errors\n%s", rep, log)
	}
	if len(rep.Samples) < 2 || rep.Samples[0].RSS <= 0 {
		t.Errorf("samples %+v: want the server's RSS before and after", rep.Samples)
	}
	for _, want := range []string{"in-process server on http://127.0.0.1:", "warm-up: asked the 37 questions once", "3 clients, "} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

func TestBenchServeBadInput(t *testing.T) {
	kb := writeFile(t, "kg.tsv", string(demo.KGBytes()))
	qs := writeFile(t, "questions.tsv", string(demo.Questions()))
	data := []string{"--format", "pq", "--questions", qs, "--kg", kb}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"remote url", []string{"--url", "http://example.com:8080"}, "loopback servers only"},
		{"private url", []string{"--url", "http://192.168.1.10:8080"}, "not this machine"},
		{"token without url", []string{"--token-env", "HOME"}, "--token-env goes with --url"},
		{"unset token", []string{"--url", "http://127.0.0.1:1", "--token-env", "STEM_BENCH_NO_SUCH_VARIABLE"}, "unset or empty"},
		{"unbounded", []string{"--duration", "0"}, "never ends"},
		{"oracle planner", []string{"--planner", "oracle"}, "oracle"},
		{"no clients", []string{"--clients", "0"}, "--clients"},
		{"arguments", []string{"what?"}, "takes no arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, append(append([]string{"bench", "serve", "--vectors", tinyVectors}, data...), tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
