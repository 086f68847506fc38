package virtuoso

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/kg"
)

// startServer starts a server for t and stops it when t ends.
func startServer(t *testing.T, opts Options) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	begin := time.Now()
	s, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("virtuoso started in %s (pid %d, %s)", time.Since(begin).Round(time.Millisecond), s.Pid(), s.URL())
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// load writes nt to a file and loads it into graph, logging the time.
func load(t *testing.T, s *Server, nt, graph string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "data.nt")
	if err := os.WriteFile(p, []byte(nt), 0o644); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	if err := s.Load(context.Background(), p, graph); err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded %d lines in %s", strings.Count(nt, "\n"), time.Since(begin).Round(time.Millisecond))
}

// binding is one value of a SPARQL JSON result.
type binding struct {
	Type  string `json:"type"`
	Value string `json:"value"`
	Lang  string `json:"xml:lang"`
}

// query runs a SELECT over plain net/http, as any client would, and
// returns the bindings and the X-SPARQL-MaxRows header.
func query(t *testing.T, endpoint, q string) ([]map[string]binding, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(url.Values{"query": {q}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/sparql-results+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("query %q: status %s", q, resp.Status)
	}
	var res struct {
		Results struct {
			Bindings []map[string]binding `json:"bindings"`
		} `json:"results"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		t.Fatalf("query %q: %v", q, err)
	}
	return res.Results.Bindings, resp.Header.Get("X-SPARQL-MaxRows")
}

func TestStartLoadQuery(t *testing.T) {
	SkipUnavailable(t)
	t.Parallel()
	s := startServer(t, Options{})
	const graph = "http://example.org/g"
	load(t, s, `<http://example.org/paris> <http://example.org/capitalOf> <http://example.org/france> .
<http://example.org/paris> <http://www.w3.org/2000/01/rdf-schema#label> "Paris"@fr .
<http://example.org/france> <http://www.w3.org/2000/01/rdf-schema#label> "Fran\u00e7e \"FR\""@en .
<http://example.org/paris> <http://example.org/population> "2102650"^^<http://www.w3.org/2001/XMLSchema#integer> .
`, graph)

	rows, _ := query(t, s.URL(), `SELECT ?p ?o FROM <`+graph+`> WHERE { <http://example.org/paris> ?p ?o } ORDER BY ?p`)
	got := make([]string, len(rows))
	for i, r := range rows {
		got[i] = fmt.Sprintf("%s %s:%s@%s", r["p"].Value, r["o"].Type, r["o"].Value, r["o"].Lang)
	}
	want := []string{
		"http://example.org/capitalOf uri:http://example.org/france@",
		"http://example.org/population typed-literal:2102650@",
		"http://www.w3.org/2000/01/rdf-schema#label literal:Paris@fr",
	}
	if !slices.Equal(got, want) {
		t.Errorf("paris's edges:\n got %q\nwant %q", got, want)
	}
	rows, _ = query(t, s.URL(), `SELECT ?l WHERE { <http://example.org/france> <http://www.w3.org/2000/01/rdf-schema#label> ?l }`)
	if len(rows) != 1 || rows[0]["l"].Value != "Fran\u00e7e \"FR\"" || rows[0]["l"].Lang != "en" {
		t.Errorf("france's label = %+v, want one Françe \"FR\"@en", rows)
	}

	// Exec reports SQL errors, which isql-vt itself exits 0 on.
	if _, err := s.Exec(context.Background(), "select 1/0;"); err == nil || !strings.Contains(err.Error(), "Division by 0") {
		t.Errorf("Exec(1/0) error = %v, want the server's division by 0", err)
	}
	out, err := s.Exec(context.Background(), "select count(*) from DB.DBA.LOAD_LIST where ll_error is not null;")
	if err != nil || !strings.Contains(out, "\n0\n") {
		t.Errorf("load errors: %v, output %q; want a count of 0", err, out)
	}
}

func TestLoadErrors(t *testing.T) {
	SkipUnavailable(t)
	t.Parallel()
	s := startServer(t, Options{})
	ctx := context.Background()
	bad := filepath.Join(t.TempDir(), "bad's_file%.nt")
	if err := os.WriteFile(bad, []byte("<http://x/a> <http://x/p> .\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, file, graph, want string
	}{
		{"syntax error", bad, "http://x/g", "Missing object"},
		{"missing file", filepath.Join(t.TempDir(), "none.nt"), "http://x/g", "no such file"},
		{"graph not an IRI", bad, "http://x/a b", "not an IRI"},
		{"graph with a quote", bad, "http://x/'", "not an IRI"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Load(ctx, tc.file, tc.graph)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load(%s, %s) error = %v, want one containing %q", tc.file, tc.graph, err, tc.want)
			}
		})
	}
}

// TestResultSetMaxRows documents the engine behaviour a client must page
// around: a result longer than ResultSetMaxRows is cut, with status 200
// and no error. The header X-SPARQL-MaxRows (the cap) comes with every
// reply that holds as many rows as the cap, cut or not: a page of exactly
// LIMIT cap rows carries it too, so it says "maybe cut", never "cut".
func TestResultSetMaxRows(t *testing.T) {
	SkipUnavailable(t)
	t.Parallel()
	s := startServer(t, Options{ResultSetMaxRows: 5})
	var nt strings.Builder
	for i := range 20 {
		fmt.Fprintf(&nt, "<http://x/s%02d> <http://x/p> <http://x/o%02d> .\n", i, i)
	}
	load(t, s, nt.String(), "http://x/g")

	tests := []struct {
		query      string
		rows       int
		first      string
		maxRowsHdr string
	}{
		{"SELECT ?s WHERE { ?s <http://x/p> ?o } ORDER BY ?s", 5, "http://x/s00", "5"},
		{"SELECT ?s WHERE { ?s <http://x/p> ?o } ORDER BY ?s OFFSET 15 LIMIT 5", 5, "http://x/s15", "5"},
		{"SELECT ?s WHERE { ?s <http://x/p> ?o } ORDER BY ?s OFFSET 18", 2, "http://x/s18", ""},
		{"SELECT (COUNT(*) AS ?s) WHERE { ?s <http://x/p> ?o }", 1, "20", ""},
	}
	for _, tc := range tests {
		rows, hdr := query(t, s.URL(), tc.query)
		if len(rows) != tc.rows || rows[0]["s"].Value != tc.first {
			t.Errorf("%s: %d rows from %v, want %d from %s", tc.query, len(rows), rows[0]["s"].Value, tc.rows, tc.first)
		}
		if hdr != tc.maxRowsHdr {
			t.Errorf("%s: X-SPARQL-MaxRows = %q, want %q", tc.query, hdr, tc.maxRowsHdr)
		}
	}
}

func TestStopAndKillLeaveNoProcess(t *testing.T) {
	SkipUnavailable(t)
	t.Parallel()
	for _, kill := range []bool{false, true} {
		t.Run(fmt.Sprintf("kill=%v", kill), func(t *testing.T) {
			s, err := Start(context.Background(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			pid, dir := s.Pid(), s.Dir()
			begin := time.Now()
			if kill {
				if err := s.Kill(); err != nil {
					t.Fatal(err)
				}
				if _, err := http.Get(s.URL()); err == nil {
					t.Errorf("endpoint %s answers after Kill", s.URL())
				}
			}
			if err := s.Stop(); err != nil {
				t.Fatal(err)
			}
			t.Logf("stopped in %s", time.Since(begin).Round(time.Millisecond))
			if alive(pid) {
				t.Errorf("pid %d still running after Stop", pid)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("folder %s left behind (stat: %v)", dir, err)
			}
			if err := s.Stop(); err != nil {
				t.Errorf("second Stop: %v", err)
			}
		})
	}
}

// TestDetachAttach is scripts/virtuoso's life cycle: start detached in a
// given folder, find it again by the pid file, stop it from there.
func TestDetachAttach(t *testing.T) {
	SkipUnavailable(t)
	t.Parallel()
	dir := t.TempDir()
	s, err := Start(context.Background(), Options{Dir: dir, Detach: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Kill() })
	if _, err := Start(context.Background(), Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "running there already") {
		t.Errorf("second Start in %s: error %v, want 'running there already'", dir, err)
	}
	a, err := Attach(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a.URL() != s.URL() || a.Pid() != s.Pid() || a.Port() != s.Port() {
		t.Errorf("Attach = %s pid %d port %d, want %s pid %d port %d", a.URL(), a.Pid(), a.Port(), s.URL(), s.Pid(), s.Port())
	}
	load(t, a, "<http://x/a> <http://x/p> \"v\" .\n", "http://x/g")
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	if !s.waitGone(5 * time.Second) {
		t.Errorf("pid %d still running after Stop through Attach", s.Pid())
	}
	if _, err := os.Stat(filepath.Join(dir, PidFile)); !os.IsNotExist(err) {
		t.Errorf("pid file left behind (stat: %v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "virtuoso.db")); err != nil {
		t.Errorf("a given folder must be kept: %v", err)
	}
	if _, err := Attach(dir); err == nil {
		t.Error("Attach after Stop succeeded")
	}
}

func TestStartFailsWithLog(t *testing.T) {
	SkipUnavailable(t)
	t.Parallel()
	// A port held by someone else: the server cannot bind it and exits.
	s := startServer(t, Options{})
	s2, err := Start(context.Background(), Options{HTTPPort: s.HTTPPort()})
	if err == nil {
		s2.Stop()
		t.Fatal("Start on a taken HTTP port succeeded")
	}
	if !strings.Contains(err.Error(), OutFile) {
		t.Errorf("error %v does not quote the server's log", err)
	}
	t.Logf("taken port: %v", err)
}

func TestIniPorts(t *testing.T) {
	dir := t.TempDir()
	ini := filepath.Join(dir, IniFile)
	o := Options{ResultSetMaxRows: 7, MaxQueryExecutionTime: 1500 * time.Millisecond}.withDefaults()
	text := iniText(dir, 1234, 5678, o)
	if err := os.WriteFile(ini, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	port, httpPort, err := readPorts(ini)
	if err != nil || port != 1234 || httpPort != 5678 {
		t.Errorf("readPorts = %d, %d, %v; want 1234, 5678", port, httpPort, err)
	}
	for _, want := range []string{"ResultSetMaxRows           = 7\n", "MaxQueryExecutionTime      = 2\n", "NumberOfBuffers      = 4000\n", "DirsAllowed          = " + dir + "\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("ini lacks %q", want)
		}
	}
}

func TestRDFExt(t *testing.T) {
	tests := []struct{ path, want string }{
		{"/a/kb.nt", ".nt"},
		{"/a/kb.ttl", ".ttl"},
		{"/a/kb.nt.gz", ".nt.gz"},
		{"/a/kb.gz", ".nt.gz"},
		{"/a/kb", ".nt"},
		{"/a/kb.n t", ".nt"},
	}
	for _, tc := range tests {
		if got := rdfExt(tc.path); got != tc.want {
			t.Errorf("rdfExt(%s) = %s, want %s", tc.path, got, tc.want)
		}
	}
}

// TestExportedKG loads what `stem kg export` writes for awkward names and
// reads the names back from the endpoint: Virtuoso keeps the escaped IRIs
// byte for byte, so kg.NameFromIRI inverts them.
func TestExportedKG(t *testing.T) {
	SkipUnavailable(t)
	t.Parallel()
	s := startServer(t, Options{})
	b := kg.NewBuilder()
	b.Add("AC/DC", "music.artist.genre", `Hard "rock"`)
	b.Add("Zürich", "located in", "東京 <Tokyo>")
	b.Add("100% real", "r#1", "http://dbpedia.org/resource/Paris")
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.LoadKG(context.Background(), g, "http://x/kg"); err != nil {
		t.Fatal(err)
	}
	rows, _ := query(t, s.URL(), `SELECT ?h ?r ?t ?n FROM <http://x/kg> WHERE { ?h ?r ?t . FILTER(isIRI(?t)) ?h <`+kg.NamePredicate+`> ?n } ORDER BY ?n`)
	var got []string
	for _, r := range rows {
		name := func(iri string) string {
			if n, ok := kg.NameFromIRI(kg.FreebaseNS, iri); ok {
				return n
			}
			return iri
		}
		got = append(got, name(r["h"].Value)+" | "+name(r["r"].Value)+" | "+name(r["t"].Value)+" | "+r["n"].Value)
	}
	want := []string{
		"100% real | r#1 | http://dbpedia.org/resource/Paris | 100% real",
		`AC/DC | music.artist.genre | Hard "rock" | AC/DC`,
		"Zürich | located in | 東京 <Tokyo> | Zürich",
	}
	if !slices.Equal(got, want) {
		t.Errorf("triples from the endpoint:\n got %q\nwant %q", got, want)
	}
}
