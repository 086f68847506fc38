package serve

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stem-kgqa/stem/plan"
)

func TestAskRoutes(t *testing.T) {
	st := start(t, demoBackend(t, nil), Options{})
	c := &http.Client{}
	for _, tc := range []struct {
		name, body string
		status     int
		answers    []string
		code       string
	}{
		{"pattern planner", `{"question": "who directed inception ?"}`, 200, []string{"Christopher_Nolan"}, ""},
		{"two hops", `{"question": "in which country was the director of inception born ?"}`, 200, []string{"United_Kingdom"}, ""},
		{"given entity", `{"question": "who directed it ?", "entities": ["inception"]}`, 200, []string{"Christopher_Nolan"}, ""},
		{"schema planner, breadth", `{"question": "who directed inception ?", "planner": "schema", "strategy": "breadth"}`, 200, []string{"Christopher_Nolan"}, ""},
		{"no question", `{}`, 400, nil, "no_question"},
		{"unknown field", `{"questoin": "who directed inception ?"}`, 400, nil, "bad_json"},
		{"not JSON", `who directed inception ?`, 400, nil, "bad_json"},
		{"two values", `{"question": "a"} {"question": "b"}`, 400, nil, "bad_json"},
		{"unknown planner", `{"question": "who directed inception ?", "planner": "oracle"}`, 400, nil, "unknown_planner"},
		{"bad strategy", `{"question": "who directed inception ?", "strategy": "greedy"}`, 400, nil, "bad_strategy"},
		{"unknown entity", `{"question": "who directed it ?", "entities": ["No_Such_Film"]}`, 422, nil, "unknown_entity"},
		{"no entity in the question", `{"question": "what is the meaning of life ?"}`, 422, nil, "no_entity"},
		{"question too long", `{"question": "` + strings.Repeat("why ", plan.DefaultMaxQuestion) + `"}`, 400, nil, "question_too_long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(t, c, st.URL+"/v1/ask", tc.body)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, body)
			}
			if tc.code != "" {
				if e := decode[errorBody](t, body); e.Code != tc.code || e.Error == "" {
					t.Errorf("error %+v, want code %q with a message", e, tc.code)
				}
				return
			}
			v := decode[plan.View](t, body)
			var got []string
			for _, a := range v.Answers {
				got = append(got, a.Name)
				if !a.Supported || len(a.Chains) == 0 {
					t.Errorf("answer %+v has no evidence", a)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.answers, ",") {
				t.Errorf("answers %v, want %v", got, tc.answers)
			}
			if v.Audit.Unbacked != 0 || v.Audit.Evidence == 0 || v.Explain != nil {
				t.Errorf("audit %+v, explain %v", v.Audit, v.Explain)
			}
		})
	}
}

func TestAskExplain(t *testing.T) {
	st := start(t, demoBackend(t, nil), Options{})
	status, body := post(t, http.DefaultClient, st.URL+"/v1/ask", `{"question": "who directed inception ?", "explain": true}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	v := decode[plan.View](t, body)
	if v.Explain == nil || len(v.Explain.Matched) == 0 || len(v.Explain.Anchors) == 0 || len(v.Explain.Schema) == 0 {
		t.Fatalf("explain = %+v", v.Explain)
	}
	found := false
	for _, m := range v.Explain.Matched {
		found = found || m.Triple == [3]string{"Inception", "directed_by", "Christopher_Nolan"} && m.TScore > 0.9
	}
	if !found {
		t.Errorf("no (Inception, directed_by, Christopher_Nolan) with its T-Score among %+v", v.Explain.Matched)
	}
	if v.Timings[plan.StageTrace] <= 0 {
		t.Errorf("timings %v", v.Timings)
	}
}

func TestEntityRoutes(t *testing.T) {
	st := start(t, demoBackend(t, nil), Options{})
	c := &http.Client{}
	status, body := get(t, c, st.URL+"/v1/entities?q=christopher+nolan&k=2")
	if status != 200 {
		t.Fatalf("search: %d %s", status, body)
	}
	if v := decode[SearchView](t, body); len(v.Entities) != 2 || v.Entities[0].Name != "Christopher_Nolan" {
		t.Errorf("search = %+v", v)
	}
	status, body = get(t, c, st.URL+"/v1/entities/"+url.PathEscape("inception")+"/neighbours?limit=2")
	if status != 200 {
		t.Fatalf("neighbours: %d %s", status, body)
	}
	v := decode[NeighboursView](t, body)
	if v.Entity != "Inception" || len(v.Triples) != 2 || !v.Truncated || v.Degree <= 2 || v.Triples[0][0] != "Inception" {
		t.Errorf("neighbours = %+v", v)
	}
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/v1/entities", 400},
		{"/v1/entities?q=nolan&k=0", 400},
		{"/v1/entities?q=nolan&k=101", 400},
		{"/v1/entities?q=nolan&k=ten", 400},
		{"/v1/entities/No_Such_Film/neighbours", 404},
		{"/v1/entities/Inception/neighbours?limit=-1", 400},
		{"/v1/nothing", 404},
	} {
		if status, body := get(t, c, st.URL+tc.path); status != tc.status {
			t.Errorf("GET %s: %d, want %d: %s", tc.path, status, tc.status, body)
		}
	}
}

// A failure of the server's own is a 500 to the caller and a line to the
// operator; a caller's mistake is neither.
func TestInternalErrorsLogged(t *testing.T) {
	b := demoBackend(t, nil)
	b.Search = func(context.Context, string, int) ([]Entity, error) {
		return nil, errors.New("index file is corrupt")
	}
	var log syncBuffer
	st := start(t, b, Options{Log: &log})
	status, body := get(t, http.DefaultClient, st.URL+"/v1/entities?q=nolan")
	if status != 500 || !strings.Contains(body, "index file is corrupt") || !strings.Contains(body, `"code":"internal"`) {
		t.Errorf("%d %s", status, body)
	}
	post(t, http.DefaultClient, st.URL+"/v1/ask", `{"question": "what is the meaning of life ?"}`)
	if got := log.String(); got != "stem serve: search \"nolan\": index file is corrupt\n" {
		t.Errorf("log %q", got)
	}
}

// syncBuffer is a bytes.Buffer handlers may write from any goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
