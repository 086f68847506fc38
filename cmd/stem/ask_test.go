package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestAsk(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		want     []string
		wantNot  []string
		explains bool
	}{
		{"one hop", []string{"who directed inception ?"}, []string{"1. Christopher_Nolan", "Inception -> directed_by -> Christopher_Nolan", "timings:"}, nil, false},
		{"three hops", []string{"in which country was the director of inception born ?"}, []string{
			"1. United_Kingdom",
			"Inception -> directed_by -> Christopher_Nolan -> place_of_birth -> London -> located_in -> United_Kingdom"}, []string{"\n2. "}, false},
		{"several answers", []string{"who starred in inception ?"}, []string{"Leonardo_DiCaprio", "Tom_Hardy", "Marion_Cotillard", "Elliot_Page", "Joseph_Gordon-Levitt"}, nil, false},
		{"given entity", []string{"--entity", "the godfather", "who directed it ?"}, []string{"Francis_Ford_Coppola"}, nil, false},
		{"explain", []string{"--explain", "who directed inception ?"}, []string{"plan (strategy", "anchors:", "matched triples:", "audit:", "0 unbacked"}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := run(t, append([]string{"ask", "--vectors", tinyVectors}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestAskJSON(t *testing.T) {
	out, _, err := run(t, "ask", "--vectors", tinyVectors, "--json", "--explain", "who directed inception ?")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Answers []struct {
			Answer    string   `json:"answer"`
			Supported bool     `json:"supported"`
			Chains    []string `json:"chains"`
		} `json:"answers"`
		Timings map[string]float64 `json:"timings_ms"`
		Explain struct {
			Schema  []string `json:"schema_graphs"`
			Matched []struct {
				Triple [3]string `json:"triple"`
				TScore float64   `json:"t_score"`
			} `json:"matched_triples"`
		} `json:"explain"`
		Audit struct {
			Evidence int `json:"evidence_triples"`
			Unbacked int `json:"unbacked"`
		} `json:"audit"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(got.Answers) != 1 || got.Answers[0].Answer != "Christopher_Nolan" || !got.Answers[0].Supported || len(got.Answers[0].Chains) == 0 {
		t.Errorf("answers = %+v", got.Answers)
	}
	if len(got.Explain.Schema) == 0 || len(got.Explain.Matched) == 0 {
		t.Errorf("explain = %+v", got.Explain)
	}
	if got.Audit.Unbacked != 0 || got.Audit.Evidence != len(got.Explain.Matched) {
		t.Errorf("audit = %+v, want 0 unbacked and %d evidence triples", got.Audit, len(got.Explain.Matched))
	}
	if _, ok := got.Timings["trace"]; !ok {
		t.Errorf("timings = %v", got.Timings)
	}
}

func TestAskBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no question", nil, "give a QUESTION"},
		{"no entity", []string{"zzqx wvvy ?"}, "names no entity"},
		{"unknown given entity", []string{"--entity", "Nosuch Film", "who directed it ?"}, `"Nosuch Film" is not in the KG`},
		{"missing kg", []string{"--kg", "/nonexistent/kb.txt", "who?"}, "/nonexistent/kb.txt"},
		{"bad strategy", []string{"--strategy", "wide", "who directed inception ?"}, `--strategy "wide"`},
		{"llm without model", []string{"--generator", "llm", "who directed inception ?"}, "--llm-model"},
		{"pattern without model", []string{"--planner", "pattern", "who directed inception ?"}, "--planner-model"},
		{"bad planner model", []string{"--planner-model", tinyVectors, "who directed inception ?"}, tinyVectors},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, append([]string{"ask", "--vectors", tinyVectors}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestConfigFile(t *testing.T) {
	cfg := writeFile(t, "stem.json", `{"strategy": "breadth", "beam": 2, "entity": ["inception"]}`)
	out, _, err := run(t, "ask", "--vectors", tinyVectors, "--config", cfg, "--explain", "who directed it ?")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Christopher_Nolan", "plan (strategy breadth)", "[1]"} {
		if !strings.Contains(out, w) {
			t.Errorf("config not applied: output lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "[2]") {
		t.Errorf("beam 2 from the config file planned a third candidate:\n%s", out)
	}
	// The command line wins over the file.
	out, _, err = run(t, "ask", "--vectors", tinyVectors, "--config", cfg, "--entity", "the godfather", "who directed it ?")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Francis_Ford_Coppola") {
		t.Errorf("command-line --entity did not win:\n%s", out)
	}
	bad := writeFile(t, "bad.json", `{"stratgy": "breadth"}`)
	if _, _, err := run(t, "ask", "--vectors", tinyVectors, "--config", bad, "who?"); err == nil || !strings.Contains(err.Error(), `"stratgy" is not a setting of this command (did you mean "strategy"?)`) {
		t.Errorf("unknown key: err = %v", err)
	}
}
