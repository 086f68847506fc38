package serve

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/projection"
)

func TestToken(t *testing.T) {
	st := start(t, demoBackend(t, nil), Options{Token: "s3cret"})
	c := &http.Client{}
	askBody := `{"question": "who directed inception ?"}`
	for _, tc := range []struct {
		name, method, path, token string
		status                    int
	}{
		{"health needs none", "GET", "/healthz", "", 200},
		{"readiness needs none", "GET", "/readyz", "", 200},
		{"the viewer's page needs none", "GET", "/", "", 200},
		{"ask without", "POST", "/v1/ask", "", 401},
		{"ask with a wrong one", "POST", "/v1/ask", "Bearer s3cre", 401},
		{"ask with it", "POST", "/v1/ask", "Bearer s3cret", 200},
		// RFC 7235: the scheme's case is not significant.
		{"ask with it, lower-case scheme", "POST", "/v1/ask", "bearer s3cret", 200},
		{"ask with it, upper-case scheme", "POST", "/v1/ask", "BEARER s3cret", 200},
		{"another scheme", "POST", "/v1/ask", "Basic s3cret", 401},
		{"no scheme", "POST", "/v1/ask", "s3cret", 401},
		{"search without", "GET", "/v1/entities?q=nolan", "", 401},
		{"search with it", "GET", "/v1/entities?q=nolan", "Bearer s3cret", 200},
		{"neighbours without", "GET", "/v1/entities/Inception/neighbours", "", 401},
		{"metrics without", "GET", "/metrics", "", 401},
		{"metrics with it", "GET", "/metrics", "Bearer s3cret", 200},
		{"MCP without", "POST", "/mcp", "", 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h []string
			if tc.token != "" {
				h = []string{"Authorization", tc.token}
			}
			var status int
			var body string
			if tc.method == "POST" {
				status, body = post(t, c, st.URL+tc.path, askBody, h...)
			} else {
				status, body = get(t, c, st.URL+tc.path, h...)
			}
			if status != tc.status {
				t.Errorf("%d, want %d: %s", status, tc.status, body)
			}
		})
	}
	req, _ := http.NewRequest("POST", st.URL+"/v1/ask", strings.NewReader(askBody))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
		t.Errorf("a 401 says WWW-Authenticate %q", got)
	}
}

func TestRequestOrigin(t *testing.T) {
	st := start(t, demoBackend(t, nil), Options{})
	c := &http.Client{}
	body := `{"question": "who directed inception ?"}`
	for _, tc := range []struct {
		name   string
		header []string
		status int
	}{
		{"loopback by name", []string{"Host", "localhost"}, 200},
		{"DNS rebinding", []string{"Host", "attacker.example:8080"}, 403},
		{"a page on another site", []string{"Origin", "https://attacker.example", "Sec-Fetch-Site", "cross-site"}, 403},
		{"the viewer itself", []string{"Sec-Fetch-Site", "same-origin"}, 200},
	} {
		want := map[int]string{200: `"answer":"Christopher_Nolan"`, 403: `"code":"`}[tc.status]
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", st.URL+"/v1/ask", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			for i := 0; i < len(tc.header); i += 2 {
				if tc.header[i] == "Host" {
					req.Host = tc.header[i+1]
				} else {
					req.Header.Set(tc.header[i], tc.header[i+1])
				}
			}
			if status, resp := do(t, c, req); status != tc.status || !strings.Contains(resp, want) {
				t.Errorf("%d, want %d with %s: %s", status, tc.status, want, resp)
			}
		})
	}
}

func TestIsLocalHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST:80": true, "127.0.0.1:8080": true, "127.3.4.5": true, "[::1]:8080": true, "::1": true,
		"example.com": false, "10.0.0.1:8080": false, "localhost.example.com": false, "": false,
	} {
		if got := IsLocalHost(host); got != want {
			t.Errorf("IsLocalHost(%q) = %v", host, got)
		}
	}
}

func TestReadiness(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	base, c := "http://"+ln.Addr().String(), &http.Client{}
	// Loading: alive, not ready, questions asked to come back.
	if status, _ := get(t, c, base+"/healthz"); status != 200 {
		t.Errorf("healthz while loading: %d", status)
	}
	if status, _ := get(t, c, base+"/readyz"); status != 503 {
		t.Errorf("readyz while loading: %d", status)
	}
	if status, body := post(t, c, base+"/v1/ask", `{"question": "who directed inception ?"}`); status != 503 || !strings.Contains(body, `"code":"loading"`) {
		t.Errorf("ask while loading: %d %s", status, body)
	}
	if err := s.Load(context.Background(), Backend{}); err == nil {
		t.Error("an empty backend was taken")
	}
	if err := s.Load(context.Background(), demoBackend(t, nil)); err != nil {
		t.Fatal(err)
	}
	if status, _ := get(t, c, base+"/readyz"); status != 200 {
		t.Errorf("readyz when loaded: %d", status)
	}
	if status, _ := post(t, c, base+"/v1/ask", `{"question": "who directed inception ?"}`); status != 200 {
		t.Errorf("ask when loaded: %d", status)
	}
}

func TestMetrics(t *testing.T) {
	st := start(t, demoBackend(t, nil), Options{})
	c := &http.Client{}
	for range 3 {
		post(t, c, st.URL+"/v1/ask", `{"question": "who directed inception ?"}`)
	}
	post(t, c, st.URL+"/v1/ask", `{}`)
	get(t, c, st.URL+"/v1/entities/Nowhere/neighbours")
	_, text := get(t, c, st.URL+"/metrics")
	for series, want := range map[string]float64{
		`stem_http_requests_total{code="200",route="POST /v1/ask"}`:                       3,
		`stem_http_requests_total{code="400",route="POST /v1/ask"}`:                       1,
		`stem_http_requests_total{code="404",route="GET /v1/entities/{name}/neighbours"}`: 1,
		`stem_http_request_duration_seconds_count{route="POST /v1/ask"}`:                  4,
		`stem_stage_duration_seconds_count{stage="trace"}`:                                3,
		`stem_stage_duration_seconds_count{stage="link"}`:                                 3,
		`stem_questions_in_flight`:                                                        0,
		`stem_questions_rejected_total`:                                                   0,
	} {
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(text)
		if m == nil {
			t.Errorf("no %s in /metrics", series)
			continue
		}
		if got, _ := strconv.ParseFloat(m[1], 64); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	if !regexp.MustCompile(`(?m)^process_resident_memory_bytes \d`).MatchString(text) {
		t.Error("no resident memory in /metrics")
	}
}

// Every reply says it may not be framed or sniffed, and the viewer's
// policy lets it load only its own files: a hidden frame on another site
// made a browser ask same-origin questions in a loop through /?q=.
func TestSecurityHeaders(t *testing.T) {
	st := start(t, demoBackend(t, nil), Options{})
	c := &http.Client{}
	for _, path := range []string{"/", "/?q=who+directed+inception+%3F", "/app.js", "/healthz", "/v1/entities?q=nolan", "/nothing", "/v1/ask", "/mcp"} {
		resp, err := c.Get(st.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := resp.Header
		csp := h.Get("Content-Security-Policy")
		if h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" ||
			!strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("GET %s: %d X-Frame-Options %q, nosniff %q, CSP %q", path, resp.StatusCode, h.Get("X-Frame-Options"), h.Get("X-Content-Type-Options"), csp)
		}
	}
}

// Invisible format characters (Unicode Cf) do not change an answer:
// "who directed \u202einception\u202c ?" answered United_Kingdom,
// United_States, and a zero-width joiner in an entity name gave 422.
func TestFormatCharacters(t *testing.T) {
	st := start(t, demoBackend(t, nil), Options{})
	c := &http.Client{}
	_, plain := post(t, c, st.URL+"/v1/ask", `{"question":"who directed inception ?"}`)
	for _, body := range []string{
		`{"question":"who directed \u202einception\u202c ?"}`,
		`{"question":"\ufeffwho directed in\u200bception ?"}`,
		`{"question":"who di\u00adrected inception\u2066 ?"}`,
		`{"question":"who directed it ?","entities":["Incep\u200dtion"]}`,
		`{"question":"who directed it ?","entities":["\u200eInception\u200f"]}`,
	} {
		status, got := post(t, c, st.URL+"/v1/ask", body)
		if status != 200 || strip(got) != strip(plain) && !strings.Contains(got, `"answer":"Christopher_Nolan"`) {
			t.Errorf("%s: %d %s\nwant as plain: %s", body, status, trim(got), trim(plain))
		}
	}
	if status, body := get(t, c, st.URL+"/v1/entities/Incep%E2%80%8Dtion/neighbours?limit=1"); status != 200 || !strings.Contains(body, `"entity":"Inception"`) {
		t.Errorf("neighbours of Incep\\u200dtion: %d %s", status, body)
	}
	if status, body := get(t, c, st.URL+"/v1/entities?q=%E2%80%AEnolan%E2%80%AC&k=1"); status != 200 || !strings.Contains(body, "Christopher_Nolan") {
		t.Errorf("search for \\u202enolan\\u202c: %d %s", status, body)
	}
}

// runInBackground runs Run on a free loopback port (or over stdio) with
// the demo backend, and returns its base URL (empty over stdio), its log
// and the channel of its result.
func runInBackground(t *testing.T, ctx context.Context, o RunOptions, wrap ...func(projection.Planner) projection.Planner) (string, *syncBuffer, chan error) {
	t.Helper()
	log := &syncBuffer{}
	done := make(chan error, 1)
	var w func(projection.Planner) projection.Planner
	if len(wrap) > 0 {
		w = wrap[0]
	}
	b := demoBackend(t, w)
	go func() {
		done <- Run(ctx, o, func(ctx context.Context, srv *Server) (func() error, error) {
			return func() error { return nil }, srv.Load(ctx, b)
		}, log)
	}()
	var url string
	waitFor(t, "Run to be ready", func() bool {
		m := regexp.MustCompile(`ready in \S+: (http://\S+/) `).FindStringSubmatch(log.String())
		if m != nil {
			url = strings.TrimSuffix(m[1], "/")
		}
		return m != nil || strings.Contains(log.String(), "MCP tools on stdin/stdout")
	})
	return url, log, done
}

// A token with whitespace around it, as a mounted secret file's
// "abc123\n", is trimmed with a warning: it started the server silently
// and locked every client out.
func TestTokenWhitespace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, log, done := runInBackground(t, ctx, RunOptions{Options: Options{Token: "abc123\n"}, Listen: "127.0.0.1:0"})
	if status, body := post(t, &http.Client{}, url+"/v1/ask", `{"question":"who directed inception ?"}`, "Authorization", "Bearer abc123"); status != 200 {
		t.Errorf("with the token as a client sends it: %d %s", status, body)
	}
	if !strings.Contains(log.String(), "WARNING: the token had whitespace around it") {
		t.Errorf("no warning in the log:\n%s", log.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
	if err := Run(context.Background(), RunOptions{Options: Options{Token: " \n"}, Listen: "127.0.0.1:0"}, nil, io.Discard); err == nil || !strings.Contains(err.Error(), "whitespace") {
		t.Errorf("a token of whitespace: %v", err)
	}
}

// The log says "stopping" before "stopped": it said "every request in
// flight was answered" first (2 of 2 runs), or never said "stopping",
// when ctx ended before the signal's goroutine ran.
func TestStopLogOrder(t *testing.T) {
	for _, stdio := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		o := RunOptions{Listen: "127.0.0.1:0", Stop: make(chan os.Signal, 2)}
		if stdio {
			inR, inW := io.Pipe()
			defer inW.Close()
			o.Stdio, o.In, o.Out = true, inR, io.Discard
		}
		_, log, done := runInBackground(t, ctx, o)
		cancel() // main's context, ended by a signal the Stop channel has not delivered yet
		if err := <-done; err != nil {
			t.Errorf("stdio %v: %v", stdio, err)
		}
		text := log.String()
		stopping, stopped := strings.Index(text, "stopping;"), strings.Index(text, "stopped;")
		if stopping < 0 || stopped < stopping {
			t.Errorf("stdio %v: the log does not say stopping before stopped:\n%s", stdio, text)
		}
	}
}

// A name is resolved as given first, then without its format characters:
// a KG's own name may hold one (a zero-width non-joiner in a Persian
// name), a client's must not need it.
func TestResolveFormatCharacters(t *testing.T) {
	g, err := kg.ReadTSV(strings.NewReader("Mehr\u200cdad\tdirected\tInception\n"), "zwnj.tsv")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"Mehr\u200cdad":         "Mehr\u200cdad",
		"Incep\u200dtion":       "Inception",
		"\u202eInception\u202c": "Inception",
	} {
		if got, err := resolve(g, name); err != nil || got != want {
			t.Errorf("resolve(%+q) = %+q, %v; want %+q", name, got, err, want)
		}
	}
	if _, err := resolve(g, "Nowhere\u200d"); err == nil {
		t.Error("an unknown name was resolved")
	}
}
