package sparql

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/kg"
)

// endpoint serves replies in turn (the last one again when they run out)
// and counts requests.
func endpoint(t *testing.T, replies ...func(w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		replies[min(i, len(replies)-1)](w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func reply(status int, ctype, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(status)
		w.Write([]byte(body))
	}
}

const oneRow = `{"head":{"vars":["s"]},"results":{"bindings":[{"s":{"type":"uri","value":"http://rdf.freebase.com/ns/a"}}]}}`

func testGraph(t *testing.T, url string, timeout time.Duration) *Graph {
	t.Helper()
	g, err := Open(Config{Endpoint: url, Timeout: timeout, Retries: 2, BackoffBase: time.Millisecond, BackoffMax: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Each fault ends in an error that names the endpoint and says what went
// wrong, after the retries that can help and none that cannot.
func TestFaults(t *testing.T) {
	slow := func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	}
	for _, c := range []struct {
		name     string
		replies  []func(http.ResponseWriter, *http.Request)
		want     []string // in the error; nil: no error
		requests int64
	}{
		{"ok", []func(http.ResponseWriter, *http.Request){reply(200, "application/sparql-results+json", oneRow)}, nil, 1},
		{"5xx then ok is retried", []func(http.ResponseWriter, *http.Request){reply(503, "text/plain", "busy"), reply(200, "application/sparql-results+json", oneRow)}, nil, 2},
		{"5xx throughout gives up", []func(http.ResponseWriter, *http.Request){reply(500, "text/plain", "Virtuoso 42000 Error SR001: out of memory")}, []string{"status 500", "out of memory", "gave up after 3 attempts"}, 3},
		{"rejected query shows the message", []func(http.ResponseWriter, *http.Request){reply(400, "text/plain", "Virtuoso 37000 Error SP030: SPARQL compiler, line 1: syntax error")}, []string{"status 400", "refused the query", "SP030: SPARQL compiler"}, 1},
		{"HTML page", []func(http.ResponseWriter, *http.Request){reply(200, "text/html", "<html><body>Login</body></html>")}, []string{"text/html", "not SPARQL JSON results", "is this a SPARQL endpoint?"}, 1},
		{"garbage JSON", []func(http.ResponseWriter, *http.Request){reply(200, "application/json", `{"rows": []}`)}, []string{"no \"results\" member"}, 1},
		{"501 is not retried as if transient", []func(http.ResponseWriter, *http.Request){reply(501, "text/plain", "Unsupported method")}, []string{"501", "to POST", "to GET", "is this a SPARQL endpoint?"}, 2},
		{"a 4xx other than 405 is not retried", []func(http.ResponseWriter, *http.Request){reply(404, "text/plain", "no such page")}, []string{"status 404", "no such page"}, 1},
		{"slow server times out, retried", []func(http.ResponseWriter, *http.Request){slow}, []string{"no answer within 50ms", "--sparql-timeout", "gave up after 3 attempts"}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, n := endpoint(t, c.replies...)
			g := testGraph(t, srv.URL+"/sparql", 50*time.Millisecond)
			err := g.Ping(context.Background())
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
			} else {
				if err == nil {
					t.Fatal("no error")
				}
				for _, w := range append(c.want, srv.URL+"/sparql") {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
			}
			if got := n.Load(); got != c.requests {
				t.Errorf("%d requests, want %d", got, c.requests)
			}
		})
	}
}

// An endpoint that refuses POST (405 or 501, as Python's http.server and
// some proxies do) is asked by GET, once and from then on: the SPARQL 1.1
// protocol allows both. It was retried by POST until it gave up.
func TestGETFallback(t *testing.T) {
	for _, status := range []int{http.StatusMethodNotAllowed, http.StatusNotImplemented} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			var posts, gets atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodGet {
					posts.Add(1)
					w.WriteHeader(status)
					return
				}
				gets.Add(1)
				if q := r.URL.Query(); !strings.Contains(q.Get("query"), "SELECT") || q.Get("default-graph-uri") != "http://g" {
					t.Errorf("GET query %q", r.URL.RawQuery)
				}
				w.Header().Set("Content-Type", "application/sparql-results+json")
				w.Write([]byte(oneRow))
			}))
			defer srv.Close()
			g, err := Open(Config{Endpoint: srv.URL + "/sparql", Graph: "http://g", Retries: 3, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if err := g.Ping(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			if p, q := posts.Load(), gets.Load(); p != 1 || q != 3 {
				t.Errorf("%d POSTs and %d GETs, want 1 and 3", p, q)
			}
		})
	}
}

func TestUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/sparql"
	srv.Close()
	err := testGraph(t, url, time.Second).Ping(context.Background())
	if err == nil || !strings.Contains(err.Error(), "unreachable") || !strings.Contains(err.Error(), url) {
		t.Fatalf("got %v, want unreachable naming %s", err, url)
	}
}

func TestCancel(t *testing.T) {
	srv, _ := endpoint(t, func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // the server notices a closed connection only once the body is read
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	g := testGraph(t, srv.URL, time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := g.Ping(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the context's error", err)
	}
}

// A server that cuts a result below the page size (as Virtuoso does at
// ResultSetMaxRows) is caught by the count: ErrTruncated, not fewer edges.
func TestTruncationDetected(t *testing.T) {
	count := `{"head":{"vars":["x","n"]},"results":{"bindings":[{"x":{"type":"uri","value":"http://rdf.freebase.com/ns/hub"},"n":{"type":"typed-literal","value":"20"}}]}}`
	var rows strings.Builder
	rows.WriteString(`{"head":{"vars":["x","p","o"]},"results":{"bindings":[`)
	for i := range 5 { // the server's cap: 5 of 20
		if i > 0 {
			rows.WriteString(",")
		}
		rows.WriteString(`{"x":{"type":"uri","value":"http://rdf.freebase.com/ns/hub"},"p":{"type":"uri","value":"http://rdf.freebase.com/ns/r"},"o":{"type":"uri","value":"http://rdf.freebase.com/ns/e` + string(rune('a'+i)) + `"}}`)
	}
	rows.WriteString(`]}}`)
	srv, _ := endpoint(t, func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		w.Header().Set("Content-Type", "application/sparql-results+json")
		if strings.Contains(r.Form.Get("query"), "COUNT") {
			w.Write([]byte(count))
			return
		}
		w.Write([]byte(rows.String()))
	})
	g, err := Open(Config{Endpoint: srv.URL, PageSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Neighbourhood(context.Background(), []string{"hub"}, 1)
	if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "5 of 20 rows") {
		t.Fatalf("got %v, want ErrTruncated with 5 of 20 rows", err)
	}
}

func TestParseResults(t *testing.T) {
	r, err := ParseResults([]byte(`{"head":{"vars":["e","l"]},"results":{"bindings":[{"e":{"type":"uri","value":"http://x/a"},"l":{"type":"literal","value":"A b","xml:lang":"en"}},{"e":{"type":"bnode","value":"b0"}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 2 || r.Rows[0]["l"] != (Term{Type: "literal", Value: "A b", Lang: "en"}) || r.Rows[1]["e"].Type != "bnode" || len(r.Rows[1]) != 1 {
		t.Errorf("got %+v", r)
	}
	for _, bad := range []string{``, `<html>`, `{"boolean": true}`, `{"results":{"bindings":[{"e":{"type":"blob","value":"x"}}]}}`} {
		if _, err := ParseResults([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseResults(f *testing.F) {
	f.Add([]byte(oneRow))
	f.Add([]byte(`{"results":{"bindings":[]}}`))
	f.Add([]byte(`{"boolean":false}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseResults(b)
		if err != nil {
			return
		}
		for _, row := range r.Rows {
			for _, term := range row {
				if term.Type != "uri" && term.Type != "literal" && term.Type != "bnode" && term.Type != "typed-literal" {
					t.Fatalf("term type %q accepted", term.Type)
				}
			}
		}
	})
}

func TestSpellings(t *testing.T) {
	got := spellings("osama bin laden")
	for _, want := range []string{"osama bin laden", "Osama bin Laden", "Osama Bin Laden", "osama_bin_laden", "Osama-Bin-Laden", "OSAMA BIN LADEN"} {
		if !slices.Contains(got, want) {
			t.Errorf("spellings lack %q: %q", want, got)
		}
	}
	if n := len(got); n != 1+9*3-1 {
		t.Errorf("%d spellings, want %d (the name as given is one of them)", n, 1+9*3-1)
	}
	if got := spellings("..."); len(got) != 1 {
		t.Errorf("spellings of punctuation: %q", got)
	}
	long := spellings("a b c d e")
	if !slices.Contains(long, "A B C D E") || !slices.Contains(long, "a_b_c_d_e") || len(long) > 7+3 {
		t.Errorf("five words: %q", long)
	}
}

// An engine without bif:contains refuses the query: in auto mode that is
// no text index, found once and never asked again; when the index was
// asked for by name, it is an error that shows the server's message.
func TestTextIndexRefused(t *testing.T) {
	ctx := context.Background()
	refuse := reply(400, "text/plain", "Encountered \" \"bif:contains\" \"")
	for _, c := range []struct {
		mode    string
		want    error
		queries int64
	}{{TextAuto, kg.ErrNoTextIndex, 1}, {TextVirtuoso, ErrRejected, 2}} {
		srv, n := endpoint(t, refuse)
		g, err := Open(Config{Endpoint: srv.URL, TextIndex: c.mode})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := g.SearchNames(ctx, []string{"tom hanks"}, 5); !errors.Is(err, c.want) {
				t.Errorf("%s: %v, want %v", c.mode, err, c.want)
			}
		}
		if n.Load() != c.queries {
			t.Errorf("%s: %d queries for two searches, want %d", c.mode, n.Load(), c.queries)
		}
	}
	if _, err := Open(Config{Endpoint: "http://127.0.0.1:1/sparql", TextIndex: "lucene"}); err == nil || !strings.Contains(err.Error(), `"lucene"`) {
		t.Errorf("an unknown text index: %v", err)
	}
}

func TestSearchWords(t *testing.T) {
	for in, want := range map[string]string{
		"Who is Osama bin Laden's wife?": "who is osama bin laden s wife",
		"'; DROP \"x\" '":                "drop x",
		"Zürich, Zürich":                 "zürich zürich",
		"":                               "",
	} {
		if got := strings.Join(searchWords(in), " "); got != want {
			t.Errorf("searchWords(%q) = %q, want %q", in, got, want)
		}
	}
}

// A relation the endpoint lacks is asked about once: the pattern planner
// checks the same paths' relations for every question.
func TestMissingRelationAskedOnce(t *testing.T) {
	srv, n := endpoint(t, reply(200, "application/sparql-results+json", `{"head":{"vars":["s"]},"results":{"bindings":[]}}`))
	g := testGraph(t, srv.URL, time.Second)
	for range 3 {
		if _, ok := g.Relation("no.such.relation"); ok {
			t.Fatal("found a relation the endpoint lacks")
		}
	}
	if got := n.Load(); got != 1 {
		t.Errorf("%d queries, want 1", got)
	}
}
