package oxigraph

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/kg"
)

func startServer(t *testing.T) *Server {
	t.Helper()
	SkipUnavailable(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	begin := time.Now()
	s, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("oxigraph started in %v at %s", time.Since(begin).Round(time.Millisecond), s.URL())
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// do sends one protocol request and returns the status, Content-Type and
// body.
func do(t *testing.T, req *http.Request) (int, string, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	return resp.StatusCode, ct, string(b)
}

// The endpoint answers the SPARQL 1.1 Protocol's query forms over the
// graphs loaded by the Graph Store Protocol: the default graph is the
// union of every graph unless default-graph-uri names one.
func TestProtocol(t *testing.T) {
	s := startServer(t)
	ctx := context.Background()
	nt := filepath.Join(t.TempDir(), "a.nt")
	if err := os.WriteFile(nt, []byte("<http://x/a> <http://x/p> \"one\"@en .\n<http://x/a> <http://x/n> \"7\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Load(ctx, nt, "http://x/g1"); err != nil {
		t.Fatal(err)
	}
	// One triple and its two entities' names (kg.WriteNTriples).
	g, err := kg.GraphOf([][3]string{{"b", "r", "c"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.LoadKG(ctx, g, "http://x/g2"); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.nt")
	os.WriteFile(bad, []byte("<http://x/a> oops .\n"), 0o644)
	if err := s.Load(ctx, bad, "http://x/g3"); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("loading a bad file: err = %v, want the server's 400", err)
	}

	count := "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
	get := func(q string, extra url.Values) *http.Request {
		v := url.Values{"query": {q}}
		for k, vs := range extra {
			v[k] = vs
		}
		r, _ := http.NewRequest(http.MethodGet, s.URL()+"?"+v.Encode(), nil)
		return r
	}
	form := func(q, graph string) *http.Request {
		v := url.Values{"query": {q}}
		if graph != "" {
			v.Set("default-graph-uri", graph)
		}
		r, _ := http.NewRequest(http.MethodPost, s.URL(), strings.NewReader(v.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return r
	}
	direct := func(q, typ string) *http.Request {
		r, _ := http.NewRequest(http.MethodPost, s.URL(), strings.NewReader(q))
		r.Header.Set("Content-Type", typ)
		return r
	}
	other := func(method, path string) *http.Request {
		r, _ := http.NewRequest(method, strings.TrimSuffix(s.URL(), "/sparql")+path, nil)
		return r
	}
	for _, c := range []struct {
		name   string
		req    *http.Request
		status int
		ctype  string
		body   string // a part of the body
	}{
		{"union of every graph", get(count, nil), 200, "application/sparql-results+json", `"value":"5"`},
		{"one default graph", get(count, url.Values{"default-graph-uri": {"http://x/g1"}}), 200, "application/sparql-results+json", `"value":"2"`},
		{"two default graphs", get(count, url.Values{"default-graph-uri": {"http://x/g1", "http://x/g2"}}), 200, "application/sparql-results+json", `"value":"5"`},
		{"a named graph", get("SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g", url.Values{"named-graph-uri": {"http://x/g2"}}), 200, "application/sparql-results+json", `"value":"http://x/g2"`},
		{"POST form", form("SELECT ?o WHERE { ?s <http://x/p> ?o }", "http://x/g1"), 200, "application/sparql-results+json", `"xml:lang":"en"`},
		{"typed literal", form("SELECT ?o WHERE { ?s <http://x/n> ?o }", ""), 200, "application/sparql-results+json", `"datatype":"http://www.w3.org/2001/XMLSchema#integer"`},
		{"POST query", direct("ASK { ?s ?p ?o }", "application/sparql-query"), 200, "application/sparql-results+json", `"boolean":true`},
		{"CONSTRUCT", get("CONSTRUCT WHERE { ?s <http://x/p> ?o }", nil), 200, "application/n-triples", `<http://x/a> <http://x/p> "one"@en .`},
		{"not SPARQL", get("SELEC ?x", nil), 400, "text/plain", "error at 1:"},
		{"an extension", get("SELECT ?e WHERE { ?e ?p ?l . ?l bif:contains 'one' }", nil), 400, "text/plain", "error at"},
		{"no query", get("", nil), 400, "text/plain", "no query"},
		{"wrong type", direct("ASK {}", "text/plain"), 415, "text/plain", "Content-Type text/plain"},
		{"wrong method", other(http.MethodDelete, "/sparql"), 405, "text/plain", "want GET or POST"},
		{"no such path", other(http.MethodGet, "/nothing"), 404, "text/plain", "/sparql"},
		{"store without graph", other(http.MethodPost, "/store"), 415, "text/plain", "Content-Type"},
	} {
		status, ctype, body := do(t, c.req)
		if status != c.status || ctype != c.ctype || !strings.Contains(body, c.body) {
			t.Errorf("%s: %d %s %.300q, want %d %s with %q", c.name, status, ctype, body, c.status, c.ctype, c.body)
		}
	}
}

// Stop ends the server and its process group; a second Stop does
// nothing.
func TestStop(t *testing.T) {
	s := startServer(t)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(s.Pid(), 0); err == nil {
		t.Errorf("pid %d still there after Stop", s.Pid())
	}
	if _, err := http.Get(s.URL() + "?query=ASK%7B%7D"); err == nil {
		t.Error("the endpoint still answers after Stop")
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestAvailable(t *testing.T) {
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{Node: filepath.Join(t.TempDir(), "no-node")}, "not found"},
		{Options{Dir: t.TempDir()}, Script},
	} {
		if err := Available(c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Available(%+v) = %v, want an error with %q", c.opts, err, c.want)
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, Script), nil, 0o644)
	os.MkdirAll(filepath.Join(dir, "node_modules", "oxigraph"), 0o755)
	os.WriteFile(filepath.Join(dir, "node_modules", "oxigraph", "package.json"), []byte(`{"version":"0.1.0"}`), 0o644)
	if err := Available(Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), `version "0.1.0", want `+Version) {
		t.Errorf("an old package: %v, want a version mismatch", err)
	}
}
