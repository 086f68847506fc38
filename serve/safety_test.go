package serve

import (
	"context"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
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
