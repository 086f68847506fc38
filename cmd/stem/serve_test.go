package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stem-kgqa/stem/internal/shareddata"
	"github.com/stem-kgqa/stem/internal/virtuoso"
	"github.com/stem-kgqa/stem/models/catalog"
	"github.com/stem-kgqa/stem/plan"
)

// serveInProcess runs `stem serve ARGS` in-process on a free loopback
// port until the test ends, and returns its base URL once it is ready.
func serveInProcess(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logR, logW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- newApp(io.Discard, logW).RunContext(ctx, append([]string{"stem", "serve", "--listen", "127.0.0.1:0"}, args...))
		logW.Close()
	}()
	lines := bufio.NewScanner(logR)
	var url, log string
	for lines.Scan() {
		log += lines.Text() + "\n"
		if m := regexp.MustCompile(`listening on (http://\S+)/;`).FindStringSubmatch(lines.Text()); m != nil {
			url = m[1]
		}
		if strings.Contains(lines.Text(), "ready in") {
			break
		}
	}
	if url == "" {
		cancel()
		t.Fatalf("stem serve did not become ready: %v\n%s", <-done, log)
	}
	go io.Copy(io.Discard, logR)
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("stem serve stopped with %v", err)
		}
	})
	return url
}

// TestServeMatchesAsk: a served answer is stem ask --json's answer, with
// the same chains and audit.
func TestServeMatchesAsk(t *testing.T) {
	url := serveInProcess(t, "--vectors", tinyVectors)
	for _, q := range []string{
		"who directed inception ?",
		"in which country was the director of inception born ?",
		"who is the spouse of the director of inception ?",
		"what is the nationality of the director of the dark knight ?",
	} {
		out, _, err := run(t, "ask", "--vectors", tinyVectors, "--json", q)
		if err != nil {
			t.Fatalf("ask %q: %v", q, err)
		}
		body, _ := json.Marshal(map[string]any{"question": q})
		resp, err := http.Post(url+"/v1/ask", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		served, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%q: %d %s", q, resp.StatusCode, served)
		}
		var want, got plan.View
		if err := json.Unmarshal([]byte(out), &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(served, &got); err != nil {
			t.Fatal(err)
		}
		if len(want.Answers) == 0 {
			t.Fatalf("%q: ask found no answer; the test needs one", q)
		}
		want.Timings, got.Timings = nil, nil
		w, _ := json.Marshal(want)
		g, _ := json.Marshal(got)
		if !bytes.Equal(w, g) {
			t.Errorf("%q:\nask   %s\nserve %s", q, w, g)
		}
	}
}

// TestServeMCPStdio speaks MCP to `stem serve --mcp-stdio` through its
// standard input and output, as an agent client that launches it does.
func TestServeMCPStdio(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var log bytes.Buffer
	app := newApp(outW, &log)
	app.Reader = inR
	done := make(chan error, 1)
	go func() {
		done <- app.RunContext(ctx, []string{"stem", "serve", "--mcp-stdio", "--vectors", tinyVectors})
		outW.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"question": "who directed inception ?"}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError || !strings.Contains(text, "1. Christopher_Nolan") {
		t.Errorf("ask over stdio: %s", text)
	}
	// The client hanging up ends the server, cleanly.
	cs.Close()
	if err := <-done; err != nil {
		t.Errorf("stem serve --mcp-stdio: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "MCP tools on stdin/stdout") {
		t.Errorf("log: %s", log.String())
	}
}

func TestServeFlags(t *testing.T) {
	t.Setenv("STEM_EMPTY_TOKEN", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--planner", "oracle"}, "oracle plans from a benchmark's gold answers"},
		{[]string{"--token-env", "STEM_EMPTY_TOKEN"}, "STEM_EMPTY_TOKEN: the variable is unset or empty"},
		{[]string{"--listen", "256.0.0.1:1"}, "--listen 256.0.0.1:1"},
		{[]string{"what", "?"}, "serve takes no arguments"},
	} {
		_, _, err := run(t, append([]string{"serve", "--vectors", tinyVectors}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("serve %v: %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
}

// TestServeOverSPARQL: a server over a Virtuoso endpoint answers and
// lists neighbours as a server over the file does.
func TestServeOverSPARQL(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: serve compared over SPARQL and over the file (the race pass checks kg/sparql itself)")
	}
	virtuoso.SkipUnavailable(t)
	kb := shareddata.Path(t, "pathquestion/3H-kb.txt")
	srv := startVirtuoso(t, t.TempDir(), kb, "http://stem.test/pq3h")
	model := pq3hPlanner(t)
	common := []string{"--vectors", tinyVectors, "--planner-model", model}
	overFile := serveInProcess(t, append([]string{"--kg", kb}, common...)...)
	overSPARQL := serveInProcess(t, append([]string{"--kg", srv.URL(), "--kg-graph", "http://stem.test/pq3h"}, common...)...)
	get := func(url string) string {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
		}
		return string(b)
	}
	ask := func(url, q, entity string) plan.View {
		body, _ := json.Marshal(map[string]any{"question": q, "entities": []string{entity}})
		resp, err := http.Post(url+"/v1/ask", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v plan.View
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s %q: %d %v", url, q, resp.StatusCode, err)
		}
		v.Timings = nil
		return v
	}
	q, e := "who is the husband of father of henry_v_count_palatine_of_the_rhine 's mom ?", "henry_v_count_palatine_of_the_rhine"
	want, got := ask(overFile, q, e), ask(overSPARQL, q, e)
	if len(want.Answers) == 0 || want.Answers[0].Name != "gertrud_of_supplingenburg" {
		t.Fatalf("over the file: %+v", want.Answers)
	}
	w, _ := json.Marshal(want.Answers)
	g, _ := json.Marshal(got.Answers)
	if !bytes.Equal(w, g) {
		t.Errorf("answers over SPARQL:\n%s\nover the file:\n%s", g, w)
	}
	var nf, ns struct{ Triples [][3]string }
	json.Unmarshal([]byte(get(overFile+"/v1/entities/henry_the_lion/neighbours")), &nf)
	json.Unmarshal([]byte(get(overSPARQL+"/v1/entities/henry_the_lion/neighbours")), &ns)
	sortTriples := func(ts [][3]string) string {
		var s []string
		for _, t := range ts {
			s = append(s, strings.Join(t[:], " "))
		}
		slices.Sort(s)
		return strings.Join(s, "\n")
	}
	if len(nf.Triples) == 0 || sortTriples(nf.Triples) != sortTriples(ns.Triples) {
		t.Errorf("neighbours over SPARQL:\n%s\nover the file:\n%s", sortTriples(ns.Triples), sortTriples(nf.Triples))
	}
}

// A second stop signal cuts the grace short: with a request in flight
// (here a body still being sent) the first lets it finish, for up to a
// minute's --grace, and the second stops the server at once. It used to
// wait the whole grace.
func TestServeSecondSignal(t *testing.T) {
	o := defaultServeOptions()
	o.Listen, o.Grace = "127.0.0.1:0", time.Minute
	enc := catalog.DefaultEncoderSettings()
	enc.Vectors = tinyVectors
	stop := make(chan os.Signal, 2)
	logR, logW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- runServe(context.Background(), stdio{stop: stop}, logW, o, plan.DefaultSettings(), enc)
		logW.Close()
	}()
	lines := bufio.NewScanner(logR)
	var addr, log string
	for lines.Scan() {
		log += lines.Text() + "\n"
		if m := regexp.MustCompile(`listening on http://(\S+)/;`).FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
		}
		if strings.Contains(lines.Text(), "ready in") {
			break
		}
	}
	if addr == "" {
		t.Fatalf("not ready: %s", log)
	}
	go io.Copy(io.Discard, logR)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/ask HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"question\":", addr)
	time.Sleep(100 * time.Millisecond) // the request is in flight
	stop <- os.Interrupt
	select {
	case err := <-done:
		t.Fatalf("the first signal stopped the server with a request in flight: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	begin := time.Now()
	stop <- os.Interrupt
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "cut off") {
			t.Errorf("runServe: %v, want the request cut off", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second signal did not stop the server")
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("stopped %v after the second signal", d)
	}
}
