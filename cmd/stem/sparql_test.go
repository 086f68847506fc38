package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/internal/shareddata"
	"github.com/stem-kgqa/stem/internal/virtuoso"
	"github.com/stem-kgqa/stem/kg"
)

// startVirtuoso starts a private Virtuoso in dir serving the KG at kbPath
// as graph.
func startVirtuoso(t *testing.T, dir, kbPath, graph string) *virtuoso.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := virtuoso.Start(ctx, virtuoso.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	g, err := kg.Load(ctx, kbPath, kg.FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.LoadKG(ctx, g, graph); err != nil {
		t.Fatal(err)
	}
	return srv
}

// pq3hPlanner trains the pattern planner on PQ-3H's training split with
// the test vectors and returns the model's path.
func pq3hPlanner(t *testing.T) string {
	t.Helper()
	questions := shareddata.Path(t, "pathquestion/splits/PQ-3H.train.txt") // skips the test, outside once, when absent
	pq3h.once.Do(func() {
		dir, err := os.MkdirTemp("", "stem-test-pq3h-")
		if err != nil {
			pq3h.err = err
			return
		}
		pq3h.dir = dir
		model := filepath.Join(dir, "pq3h.stempat")
		if _, _, err := run(t, "train", "planner", "--format", "pq", "--questions", questions, "--vectors", tinyVectors, "--out", model); err != nil {
			pq3h.err = err
			return
		}
		pq3h.model = model
	})
	if pq3h.err != nil {
		t.Fatalf("training the PQ-3H planner: %v", pq3h.err)
	}
	return pq3h.model
}

// pq3h holds the PQ-3H planner pq3hPlanner trains once for the test
// binary: the tests that ask and serve over SPARQL and over the file each
// need it, and training it is the longest step of each. TestMain removes
// its directory.
var pq3h struct {
	once  sync.Once
	dir   string
	model string
	err   error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pq3h.dir != "" {
		os.RemoveAll(pq3h.dir)
	}
	os.Exit(code)
}

// stem ask over an endpoint prints what it prints over the file; a wrong
// URL fails before any work with the URL in the message.
func TestAskOverSPARQL(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: ask compared over SPARQL and over the file (the race pass checks kg/sparql itself)")
	}
	virtuoso.SkipUnavailable(t)
	kb := shareddata.Path(t, "pathquestion/3H-kb.txt")
	srv := startVirtuoso(t, t.TempDir(), kb, "http://stem.test/pq3h")
	model := pq3hPlanner(t)
	q := "who is the husband of father of henry_v_count_palatine_of_the_rhine 's mom ?"
	args := []string{"--vectors", tinyVectors, "--planner-model", model, "--entity", "henry_v_count_palatine_of_the_rhine", q}
	fileOut, _, err := run(t, append([]string{"ask", "--kg", kb}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, append([]string{"ask", "--kg", srv.URL(), "--kg-graph", "http://stem.test/pq3h"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	if answers(out) != answers(fileOut) || !strings.Contains(out, "henry_x_duke_of_bavaria -> spouse -> gertrud_of_supplingenburg") {
		t.Errorf("over SPARQL:\n%q\nover the file:\n%q", answers(out), answers(fileOut))
	}
	// The peers' strategies run over the endpoint as over the file, here
	// planner-assisted (the planner's 3-hop path). SimGRAG's runners-up
	// may differ: over an endpoint its candidate entities come from the
	// question's neighbourhood, not the whole KG.
	for _, retriever := range []string{"simgrag", "gcr"} {
		peer := append([]string{"--retriever", retriever, "--gcr-hops", "3", "--peer-plan-weight", "1"}, args...)
		fileOut, _, err := run(t, append([]string{"ask", "--kg", kb}, peer...)...)
		if err != nil {
			t.Fatal(err)
		}
		out, _, err := run(t, append([]string{"ask", "--kg", srv.URL(), "--kg-graph", "http://stem.test/pq3h"}, peer...)...)
		if err != nil {
			t.Fatal(err)
		}
		same := answers(out) == answers(fileOut)
		if retriever == "simgrag" {
			same = strings.Contains(fileOut, "1. gertrud_of_supplingenburg")
		}
		if !same || !strings.Contains(out, "1. gertrud_of_supplingenburg") {
			t.Errorf("%s over SPARQL:\n%q\nover the file:\n%q", retriever, answers(out), answers(fileOut))
		}
	}
	bad := strings.Replace(srv.URL(), "/sparql", "/nothing-here", 1)
	if _, _, err := run(t, append([]string{"ask", "--kg", bad, "--sparql-retries", "0"}, args...)...); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("wrong URL: %v", err)
	}
}

// answers drops the timings line, which differs run to run.
func answers(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "timings:") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// The server killed in the middle of an eval: a clear error naming the
// endpoint, a results log holding only whole results, and --resume, once
// the server is back, ends with the figures of a run over the file.
func TestEvalOverSPARQLSurvivesAKilledServer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: an eval over SPARQL with a server restart")
	}
	virtuoso.SkipUnavailable(t)
	kb := shareddata.Path(t, "pathquestion/3H-kb.txt")
	qs := shareddata.Path(t, "pathquestion/splits/PQ-3H.test.txt")
	dir := t.TempDir()
	srv := startVirtuoso(t, dir, kb, "http://stem.test/pq3h")
	log := filepath.Join(t.TempDir(), "run.jsonl")
	base := []string{"eval", "--format", "pq", "--questions", qs, "--planner", "oracle", "--limit", "120", "--json", "--vectors", tinyVectors}
	remote := append(base, "--kg", srv.URL(), "--kg-graph", "http://stem.test/pq3h", "--sparql-retries", "1", "--sparql-timeout", "3s", "--out", log)

	done := make(chan error, 1)
	go func() {
		_, _, err := run(t, remote...)
		done <- err
	}()
	deadline := time.Now().Add(90 * time.Second)
	for lines(t, log) < 30 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	err := <-done
	if err == nil || !strings.Contains(err.Error(), srv.URL()) {
		t.Fatalf("eval with its server killed: %v, want an error naming %s", err, srv.URL())
	}
	t.Logf("the error: %v", err)
	written := lines(t, log)
	if written >= 121 {
		t.Fatalf("%d lines in the log: the run finished before the kill", written)
	}
	data, _ := os.ReadFile(log)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Error("the log ends in a partial line")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	again, err := virtuoso.Start(ctx, virtuoso.Options{Dir: dir, Port: srv.Port(), HTTPPort: srv.HTTPPort()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { again.Stop() })
	out, stderr, err := run(t, append(remote, "--resume")...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "resume:") {
		t.Errorf("no resume note: %s", stderr)
	}
	fileOut, _, err := run(t, append(base, "--kg", kb)...)
	if err != nil {
		t.Fatal(err)
	}
	var got, want struct{ Hits1, F1 float64 }
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(fileOut), &want); err != nil {
		t.Fatal(err)
	}
	if got != want || want.Hits1 == 0 {
		t.Errorf("resumed over SPARQL %+v, over the file %+v", got, want)
	}
}

// lines counts the newline-terminated lines of path (0 when absent).
func lines(t *testing.T, path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return bytes.Count(data, []byte("\n"))
}

// kg stats and kg neighbours over an endpoint print the file's counts and
// edges.
func TestKGCommandsOverSPARQL(t *testing.T) {
	virtuoso.SkipUnavailable(t)
	kb := shareddata.Path(t, "pathquestion/3H-kb.txt")
	srv := startVirtuoso(t, t.TempDir(), kb, "http://stem.test/pq3h")
	remote := []string{"--kg-graph", "http://stem.test/pq3h", srv.URL()}
	out, _, err := run(t, append([]string{"kg", "stats"}, remote...)...)
	if err != nil {
		t.Fatal(err)
	}
	file, _, err := run(t, "kg", "stats", kb)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"entities                1836", "relations               13", "triples                 2839", "    573  children", "     90  cause_of_death"} {
		if !strings.Contains(out, want) || !strings.Contains(file, want) {
			t.Errorf("kg stats: %q missing\nover SPARQL:\n%s\nover the file:\n%s", want, out, file)
		}
	}
	out, _, err = run(t, append(append([]string{"kg", "neighbours"}, remote...), "Henry the Lion")...)
	if err != nil {
		t.Fatal(err)
	}
	file, _, err = run(t, "kg", "neighbours", kb, "Henry the Lion")
	if err != nil {
		t.Fatal(err)
	}
	if out != file || !strings.Contains(out, "henry_the_lion  (5 out, 1 in)") {
		t.Errorf("kg neighbours over SPARQL:\n%s\nover the file:\n%s", out, file)
	}
	if _, _, err := run(t, append(append([]string{"kg", "neighbours"}, remote...), "Atlantis")...); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("a missing entity: %v", err)
	}
}

// data chains over an endpoint writes the items it writes over the file.
func TestDataChainsOverSPARQL(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: data chains compared over SPARQL and over the file (train/chains runs no goroutines; the race pass checks kg/sparql itself)")
	}
	virtuoso.SkipUnavailable(t)
	kb := shareddata.Path(t, "pathquestion/3H-kb.txt")
	qs := shareddata.Path(t, "pathquestion/splits/PQ-3H.dev.txt")
	srv := startVirtuoso(t, t.TempDir(), kb, "http://stem.test/pq3h")
	dir := t.TempDir()
	items := func(name string, kgArgs ...string) []string {
		out := filepath.Join(dir, name)
		args := append([]string{"data", "chains", "--format", "pq", "--questions", qs, "--out", out}, kgArgs...)
		if _, _, err := run(t, args...); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		return lines[1:] // the header names the KG
	}
	file := items("file.jsonl", "--kg", kb)
	remote := items("remote.jsonl", "--kg", srv.URL(), "--kg-graph", "http://stem.test/pq3h")
	if len(file) < 50 {
		t.Fatalf("%d items over the file", len(file))
	}
	if len(remote) != len(file) {
		t.Fatalf("%d items over SPARQL, %d over the file", len(remote), len(file))
	}
	// Every item holds the same chains (its evidence, as a set), and
	// chains are put in name order, closed walks (the answer is the
	// question's entity) kept in the orientation that reads first by
	// names, so every item is identical.
	same, otherPattern := 0, 0
	for i := range file {
		if remote[i] == file[i] {
			same++
			continue
		}
		var a, b struct {
			ID       string      `json:"id"`
			Evidence [][3]string `json:"evidence"`
		}
		if err := json.Unmarshal([]byte(remote[i]), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(file[i]), &b); err != nil {
			t.Fatal(err)
		}
		for _, ev := range [][][3]string{a.Evidence, b.Evidence} {
			slices.SortFunc(ev, func(x, y [3]string) int { return strings.Compare(fmt.Sprint(x), fmt.Sprint(y)) })
		}
		if a.ID != b.ID || fmt.Sprint(a.Evidence) != fmt.Sprint(b.Evidence) {
			t.Fatalf("item %d over SPARQL:\n%s\nover the file:\n%s", i, remote[i], file[i])
		}
		otherPattern++
	}
	if same != len(file) {
		t.Errorf("%d of %d items identical; %d hold the same chains in another order or pattern", same, len(file), otherPattern)
	}
}

// train gnn, eval-gnn and search take an endpoint as --kg: each question's
// graph is its neighbourhood there, and names are found at the endpoint.
func TestGNNAndSearchOverSPARQL(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: train gnn, eval-gnn and search compared over SPARQL and over the file (the race pass checks kg/sparql and tripgnn's kernels themselves)")
	}
	virtuoso.SkipUnavailable(t)
	kb := shareddata.Path(t, "pathquestion/3H-kb.txt")
	qs := shareddata.Path(t, "pathquestion/splits/PQ-3H.dev.txt")
	srv := startVirtuoso(t, t.TempDir(), kb, "http://stem.test/pq3h")
	remote := []string{"--kg", srv.URL(), "--kg-graph", "http://stem.test/pq3h"}
	dir := t.TempDir()
	train := func(name string, kgArgs ...string) (model, summary string) {
		model = filepath.Join(dir, name)
		args := append([]string{"train", "gnn", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--limit", "60",
			"--out", model, "--epochs", "2", "--width", "8", "--layers", "2"}, kgArgs...)
		_, stderr, err := run(t, args...)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(stderr) {
			if strings.HasPrefix(line, "train gnn: ") && strings.Contains(line, "training and") {
				return model, line
			}
		}
		t.Fatalf("train gnn printed no summary:\n%s", stderr)
		return "", ""
	}
	fileModel, fileSum := train("file.gnn", "--kg", kb)
	_, remoteSum := train("remote.gnn", remote...)
	if fileSum != remoteSum || !strings.Contains(fileSum, "54 training and 6 dev questions (0 skipped") {
		t.Errorf("train gnn over SPARQL: %q; over the file: %q", remoteSum, fileSum)
	}
	evalGNN := func(kgArgs ...string) map[string]float64 {
		out, _, err := run(t, append([]string{"eval-gnn", "--vectors", tinyVectors, "--format", "pq", "--questions", qs, "--limit", "60", "--gnn", fileModel, "--json"}, kgArgs...)...)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]float64
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("eval-gnn: %v\n%s", err, out)
		}
		return m
	}
	// The same questions, each with its gold path in its subgraph. The
	// subgraphs are alike, not equal: a hub's incident triples are sampled
	// by a hash of KG ids (tripgnn.SubgraphOptions.MaxNeighbors), and a
	// neighbourhood numbers them otherwise than the whole KG.
	if a, b := evalGNN(remote...), evalGNN("--kg", kb); a["n"] != 60 || b["n"] != 60 || a["gold_in_subgraph"] != 1 || b["gold_in_subgraph"] != 1 || a["mean_entities"] < 0.9*b["mean_entities"] || a["mean_entities"] > 1.1*b["mean_entities"] {
		t.Errorf("eval-gnn over SPARQL %v, over the file %v", a, b)
	}
	if _, _, err := run(t, append([]string{"train", "gnn", "--vectors", tinyVectors, "--format", "items", "--questions", qs, "--out", filepath.Join(dir, "x.gnn")}, remote...)...); err == nil || !strings.Contains(err.Error(), "--format items needs --kg FILE") {
		t.Errorf("train gnn --format items over SPARQL: %v", err)
	}

	out, _, err := run(t, append([]string{"search", "--vectors", tinyVectors, "--k", "3"}, append(remote, "Henry the Lion", "HENRY THE LION")...)...)
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(strings.TrimSpace(out), "\n")
	if len(blocks) < 4 || !strings.Contains(blocks[1], "  henry_the_lion") || !slices.ContainsFunc(blocks[2:], func(l string) bool { return strings.HasPrefix(l, "HENRY THE LION") }) {
		t.Errorf("search over SPARQL:\n%s", out)
	}
}
