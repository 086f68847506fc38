package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDataUnionSharedSetting writes the union of the fixture's own graphs
// and asks every question of it with --kg: each question then meets the
// other questions' triples (T-0's graph lacks the spouse edge T-1's has).
func TestDataUnionSharedSetting(t *testing.T) {
	dir := t.TempDir()
	gp := writeFile(t, "gp.jsonl", rogMiniPaths)
	out := filepath.Join(dir, "union.tsv")
	stdout, _, err := run(t, "data", "union", "--format", "rog", "--questions", rogMini, "--gold-paths", gp, "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "4 entities, 4 relations, 4 distinct triples, the union of 3 questions' graphs") {
		t.Errorf("data union printed %q", stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := "Christopher Nolan\tpeople.person.spouse\tEmma Thomas\n" +
		"Inception\tfilm.film.directed_by\tChristopher Nolan\n" +
		"Inception\tfilm.film.starring\tTom Hardy\n" +
		"Tom Hardy\tfilm.actor.film\tInception\n"
	if len(strings.Split(strings.TrimSpace(string(b)), "\n")) != 4 {
		t.Errorf("union file:\n%s\nwant the 4 distinct triples", b)
	}
	for _, ln := range strings.Split(strings.TrimSpace(want), "\n") {
		if !strings.Contains(string(b), ln+"\n") {
			t.Errorf("union file lacks %q:\n%s", ln, b)
		}
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"exists", []string{"--out", out}, "exists"},
		{"unknown extension", []string{"--out", filepath.Join(dir, "u.json")}, "the extension says what is written"},
		{"shared format", []string{"--out", filepath.Join(dir, "u2.tsv"), "--format", "pq"}, "share one KG already"},
	} {
		args := append([]string{"data", "union", "--format", "rog", "--questions", rogMini, "--gold-paths", gp}, tc.args...)
		if _, _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
	snap := filepath.Join(dir, "union.stemkg")
	if _, _, err := run(t, "data", "union", "--format", "rog", "--questions", rogMini, "--gold-paths", gp, "--out", snap); err != nil {
		t.Fatal(err)
	}
	stats, _, err := run(t, "kg", "stats", snap)
	if err != nil || !strings.Contains(stats, "4") {
		t.Errorf("kg stats of the union snapshot: %v\n%s", err, stats)
	}

	// Over the union, T-1 ("married to the director") meets T-0's
	// starring edge and T-0 meets T-1's spouse edge; both stay right. T-2
	// has no gold path and is not scored by the oracle planner.
	evalJSON := func(args ...string) (n int, hits1 float64) {
		t.Helper()
		o, _, err := run(t, append([]string{"eval", "--vectors", tinyVectors, "--format", "rog", "--questions", rogMini, "--gold-paths", gp, "--json"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			N     int     `json:"n"`
			Hits1 float64 `json:"hits1"`
		}
		if err := json.Unmarshal([]byte(o), &rep); err != nil {
			t.Fatalf("eval output is not JSON: %v\n%s", err, o)
		}
		return rep.N, rep.Hits1
	}
	if n, h := evalJSON("--kg", out); n != 2 || h != 100 {
		t.Errorf("eval over the union: n %d, Hits@1 %.2f; want T-0 and T-1 right", n, h)
	}
}
