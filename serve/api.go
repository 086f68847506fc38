package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/plan"
)

// AskRequest is the body of POST /v1/ask and the arguments of the MCP ask
// and explain tools.
type AskRequest struct {
	Question string `json:"question" jsonschema:"the question, in natural language"`
	// Entities are the question's KG entity names, when the caller knows
	// them; otherwise they are linked from the question.
	Entities []string `json:"entities,omitempty" jsonschema:"the question's KG entity names, when known; otherwise linked from the question"`
	Planner  string   `json:"planner,omitempty" jsonschema:"planner name, one the server serves; empty for its default"`
	Strategy string   `json:"strategy,omitempty" jsonschema:"auto (the planner's choice), precision or breadth"`
	Explain  bool     `json:"explain,omitempty" jsonschema:"also return the whole trace: plans, anchors, matched triples with T-Scores"`
}

// NeighboursView is the body of GET /v1/entities/{name}/neighbours.
type NeighboursView struct {
	Entity string `json:"entity"`
	// Degree counts every triple of the entity; Triples holds up to the
	// limit of them, outgoing first.
	Degree    int         `json:"degree"`
	Triples   [][3]string `json:"triples"`
	Truncated bool        `json:"truncated"`
}

// SearchView is the body of GET /v1/entities?q=.
type SearchView struct {
	Query    string   `json:"query"`
	Entities []Entity `json:"entities"`
}

// MaxEntities is the most entities a question may name.
const MaxEntities = 32

// Limits of the entity routes.
const (
	defaultK     = 10
	maxK         = 100
	defaultLimit = 100
	maxLimit     = 10000
)

// requestError is a failure the caller caused, with its HTTP status and a
// stable code.
type requestError struct {
	status int
	code   string
	msg    string
}

func (e *requestError) Error() string { return e.msg }

// errorBody is every error's JSON.
type errorBody struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.Handle("GET /metrics", s.guard(s.metrics.handler()))
	mux.Handle("POST /v1/ask", s.guard(http.HandlerFunc(s.ask)))
	// Without it the viewer's file server would take GET /v1/ask (404).
	mux.HandleFunc("GET /v1/ask", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", postOnly["/v1/ask"])
		writeError(w, &requestError{http.StatusMethodNotAllowed, "method_not_allowed", `POST the question as JSON: {"question": "..."}`})
	})
	mux.Handle("GET /v1/entities", s.guard(http.HandlerFunc(s.search)))
	mux.Handle("GET /v1/entities/{name}/neighbours", s.guard(http.HandlerFunc(s.neighbours)))
	// Stateless: every MCP call stands alone, so no session outlives a
	// request and shutdown never waits on an idle stream. mcpHTTP hands
	// the SDK one message at a time.
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, MaxRequestBodyBytes: s.opt.MaxBody})
	mcpFront := s.guard(s.mcpHTTP(sdk))
	for _, m := range []string{"POST", "GET", "DELETE", "PUT", "PATCH", "OPTIONS"} {
		// By method: "GET /" would conflict with a pattern of any method.
		mux.Handle(m+" /mcp", mcpFront)
	}
	// The viewer's files hold no data and a browser cannot attach a
	// bearer token when it navigates, so they are served to anyone; the
	// page asks for the token when the API wants one.
	static, _ := fs.Sub(webFiles, "web")
	mux.Handle("GET /", http.FileServerFS(static))
	// A page on another site cannot make a browser post questions here
	// (or drive MCP tools) with the user's network position.
	cross := http.NewCrossOriginProtection()
	cross.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.refuse(w, r, &requestError{http.StatusForbidden, "cross_origin", "a page on another site may not send requests here"})
	}))
	return s.metrics.instrument(jsonErrors(s.bodyBound(cross.Handler(s.hostCheck(mux)))))
}

// bodyBound refuses a body its Content-Length says is over --max-body at
// once, before reading it: a client that sent "Expect: 100-continue" gets
// 413, not "100 Continue" and a wait.
func (s *Server) bodyBound(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > s.opt.MaxBody {
			w.Header().Set("Connection", "close")
			s.refuse(w, r, errBodyTooLarge(s.opt.MaxBody))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// securityHeaders are on every reply: no page may frame the viewer (a
// hidden frame on another site made a browser ask questions in a loop
// through /?q=), no reply is read as another type than it says, and the
// viewer runs only its own script and style.
func securityHeaders(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("Referrer-Policy", "no-referrer")
}

// contentSecurityPolicy lets the viewer load its own files and ask its
// own server, nothing else, and be framed by no page.
const contentSecurityPolicy = "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'"

// guard requires the token on the routes that serve data.
func (s *Server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="stem"`)
			s.refuse(w, r, &requestError{http.StatusUnauthorized, "unauthorized", "this server wants Authorization: Bearer TOKEN"})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// hostCheck refuses Host headers that do not name this machine when the
// server listens on loopback, so a web page cannot reach it by DNS
// rebinding.
func (s *Server) hostCheck(h http.Handler) http.Handler {
	if !s.opt.Loopback {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !IsLocalHost(r.Host) {
			s.refuse(w, r, &requestError{http.StatusForbidden, "bad_host", fmt.Sprintf("Host %q is not this machine; to serve other hosts, listen on their address with --listen", r.Host)})
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "version": s.opt.Version})
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	switch {
	case s.draining.Load():
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "shutting down"})
	case s.backend.Load() == nil:
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "loading"})
	default:
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	}
}

// errLoading answers every question until Load.
var errLoading = &requestError{http.StatusServiceUnavailable, "loading", "the KG and models are still loading; retry shortly"}

// loaded returns the backend, or errLoading.
func (s *Server) loaded() (*Backend, error) {
	if b := s.backend.Load(); b != nil {
		return b, nil
	}
	return nil, errLoading
}

func (s *Server) ask(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt := mediaType(ct); mt != "application/json" {
			writeError(w, &requestError{http.StatusUnsupportedMediaType, "content_type", fmt.Sprintf("send the question as application/json, not %s", mt)})
			return
		}
	}
	body, err := s.readBody(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	var req AskRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeError(w, &requestError{http.StatusBadRequest, "bad_json", fmt.Sprintf("the body is not an ask request: %v (want {\"question\": \"...\"})", err)})
		return
	}
	if dec.More() {
		writeError(w, &requestError{http.StatusBadRequest, "bad_json", "the body holds more than one JSON value"})
		return
	}
	// The question's slot is held until its reply is written.
	ctx, release := withLease(r.Context())
	defer release()
	_, v, err := s.answer(ctx, req)
	s.reply(w, v, err, hintAsk)
}

// answer answers req within the question deadline and the concurrency
// bound: the one path of the HTTP ask route and the MCP tools.
func (s *Server) answer(ctx context.Context, req AskRequest) (_ *plan.Result, _ plan.View, err error) {
	defer func() { s.logInternal(err) }()
	b, err := s.loaded()
	if err != nil {
		return nil, plan.View{}, err
	}
	req.Question = stripFormat(req.Question)
	if req.Question == "" {
		return nil, plan.View{}, &requestError{http.StatusBadRequest, "no_question", `give the question: {"question": "..."}`}
	}
	if !hasWord(req.Question) {
		return nil, plan.View{}, &requestError{http.StatusBadRequest, "no_question", fmt.Sprintf("the question %q has no words to answer", req.Question)}
	}
	// Each entity once: the same name given twice would only repeat the
	// same search (4,500 copies took 100 times as long as one).
	var given []string
	for _, e := range req.Entities {
		if !slices.Contains(given, e) {
			if len(given) == MaxEntities {
				return nil, plan.View{}, &requestError{http.StatusBadRequest, "too_many_entities", fmt.Sprintf("more than %d distinct entities: a question names at most %d", MaxEntities, MaxEntities)}
			}
			given = append(given, e)
		}
	}
	var strategy plan.StrategyChoice
	if req.Strategy != "" {
		if err := strategy.UnmarshalText([]byte(req.Strategy)); err != nil {
			return nil, plan.View{}, &requestError{http.StatusBadRequest, "bad_strategy", fmt.Sprintf("strategy %q: %v", req.Strategy, err)}
		}
	}
	release, err := s.takeSlot(ctx)
	if err != nil {
		return nil, plan.View{}, err
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, s.opt.Timeout)
	defer cancel()
	p, err := s.pipeline(ctx, b, req.Planner)
	if err != nil {
		return nil, plan.View{}, err
	}
	if strategy != "" && strategy != "auto" {
		own := *p
		own.Strategy = strategy.Override()
		p = &own
	}
	// Two spellings of one entity are one entity.
	var entities []string
	for _, e := range given {
		if b.Graph == nil {
			e = stripFormat(e)
		} else if e, err = resolve(b.Graph, e); err != nil {
			return nil, plan.View{}, &requestError{http.StatusUnprocessableEntity, "unknown_entity", err.Error()}
		}
		if !slices.Contains(entities, e) {
			entities = append(entities, e)
		}
	}
	res, err := p.Answer(ctx, plan.Query{Question: req.Question, Entities: entities})
	switch {
	case errors.Is(err, plan.ErrNoEntity):
		return nil, plan.View{}, &requestError{http.StatusUnprocessableEntity, "no_entity", err.Error() + ` (name it in "entities")`}
	case errors.Is(err, plan.ErrTooLong):
		return nil, plan.View{}, &requestError{http.StatusBadRequest, "question_too_long", err.Error()}
	case err != nil:
		return nil, plan.View{}, err
	}
	s.metrics.observeStages(res.Timings)
	return res, res.View(req.Explain), nil
}

func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	k, err := intParam(r, "k")
	if err == nil {
		var v SearchView
		v, err = s.searchEntities(r.Context(), r.URL.Query().Get("q"), k)
		s.reply(w, v, err, hintSearch)
		return
	}
	writeError(w, err)
}

// searchEntities finds up to k entities for q (k = 0: defaultK): the one
// path of the HTTP route and the MCP tool.
func (s *Server) searchEntities(ctx context.Context, q string, k int) (_ SearchView, err error) {
	defer func() { s.logInternal(err) }()
	b, err := s.loaded()
	if err != nil {
		return SearchView{}, err
	}
	if q = stripFormat(q); !hasWord(q) {
		return SearchView{}, &requestError{http.StatusBadRequest, "no_query", fmt.Sprintf("give the text to search for, with at least one word (got %q): /v1/entities?q=tom+hanks", q)}
	}
	if k, err = within("k", k, defaultK, maxK); err != nil {
		return SearchView{}, err
	}
	if b.Search == nil {
		return SearchView{}, &requestError{http.StatusNotImplemented, "no_search", "this server has no entity index"}
	}
	ctx, cancel := context.WithTimeout(ctx, s.opt.Timeout)
	defer cancel()
	hits, err := b.Search(ctx, q, k)
	if err != nil {
		return SearchView{}, fmt.Errorf("search %q: %w", q, err)
	}
	if hits == nil {
		hits = []Entity{}
	}
	return SearchView{Query: q, Entities: hits}, nil
}

func (s *Server) neighbours(w http.ResponseWriter, r *http.Request) {
	limit, err := intParam(r, "limit")
	if err == nil {
		var v NeighboursView
		v, err = s.neighboursOf(r.Context(), r.PathValue("name"), limit)
		s.reply(w, v, err, hintNeighbours)
		return
	}
	writeError(w, err)
}

// neighboursOf lists up to limit triples of the named entity (limit = 0:
// defaultLimit): the one path of the HTTP route and the MCP tool.
func (s *Server) neighboursOf(ctx context.Context, name string, limit int) (_ NeighboursView, err error) {
	defer func() { s.logInternal(err) }()
	b, err := s.loaded()
	if err != nil {
		return NeighboursView{}, err
	}
	if limit, err = within("limit", limit, defaultLimit, maxLimit); err != nil {
		return NeighboursView{}, err
	}
	if b.Graph == nil {
		return NeighboursView{}, &requestError{http.StatusNotImplemented, "no_kg", "this server has no shared KG: each question brings its own"}
	}
	id, err := resolve(b.Graph, name)
	if err != nil {
		return NeighboursView{}, &requestError{http.StatusNotFound, "unknown_entity", err.Error()}
	}
	g := b.Graph
	if nb := kg.Remote(g); nb != nil {
		// A remote KG is read in one bounded fetch that reports its own
		// failure, not edge by edge.
		ctx, cancel := context.WithTimeout(ctx, s.opt.Timeout)
		defer cancel()
		if g, err = nb.Neighbourhood(ctx, []string{id}, 1); err != nil {
			return NeighboursView{}, fmt.Errorf("neighbours of %q: %w", id, err)
		}
	}
	v := NeighboursView{Entity: id, Triples: [][3]string{}}
	e, ok := g.Entity(id)
	if !ok {
		return v, nil
	}
	v.Degree = g.Degree(e)
	for _, ts := range [][]int32{g.Out(e), g.In(e)} {
		for _, t := range ts {
			if len(v.Triples) == limit {
				v.Truncated = true
				return v, nil
			}
			tr := g.Triple(t)
			v.Triples = append(v.Triples, [3]string{g.EntityName(tr.Head), g.RelationName(tr.Rel), g.EntityName(tr.Tail)})
		}
	}
	return v, nil
}

// hasWord says whether s has a letter or a digit: a question or a query
// of only spaces, punctuation or control characters names nothing.
func hasWord(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) >= 0
}

// intParam reads a whole-number query parameter; 0 when absent.
func intParam(r *http.Request, name string) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n == 0 {
		return 0, &requestError{http.StatusBadRequest, "bad_" + name, fmt.Sprintf("%s=%q: want a whole number from 1", name, s)}
	}
	return n, nil
}

// within returns v, def for 0, or an error naming the parameter when v is
// outside 1 to max.
func within(name string, v, def, max int) (int, error) {
	switch {
	case v == 0:
		return def, nil
	case v < 1 || v > max:
		return 0, &requestError{http.StatusBadRequest, "bad_" + name, fmt.Sprintf("%s=%d: want a whole number from 1 to %d", name, v, max)}
	}
	return v, nil
}

// reply writes v, or err as its status; a reply over Options.MaxReply is
// refused with how to narrow the request (hint).
func (s *Server) reply(w http.ResponseWriter, v any, err error, hint string) {
	if err != nil {
		writeError(w, err)
		return
	}
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false) // chains read "a -> b", as stem ask --json prints them
	if err := e.Encode(v); err != nil {
		writeError(w, fmt.Errorf("encode the reply: %w", err))
		return
	}
	if buf.Len() > s.opt.MaxReply {
		writeError(w, errReplyTooLarge(buf.Len(), s.opt.MaxReply, s.opt.MaxReply, hint))
		return
	}
	writeRaw(w, http.StatusOK, bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// stripFormat drops the invisible format characters (Unicode Cf: bidi
// controls, zero-width joiners and spaces, the BOM, soft hyphens) from a
// question or a name: they are not seen, so they must not change the
// answer ("who directed \u202einception\u202c ?" linked another entity,
// and a zero-width joiner in an entity name made it unknown).
func stripFormat(s string) string {
	if strings.IndexFunc(s, isFormat) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isFormat(r) {
			return -1
		}
		return r
	}, s)
}

func isFormat(r rune) bool { return unicode.Is(unicode.Cf, r) }

// resolve finds the KG entity a name names: as given, else without its
// invisible format characters (a KG's name may hold one, a zero-width
// non-joiner in a Persian name say; a client's must not need it).
func resolve(g kg.Reader, name string) (string, error) {
	id, err := plan.Resolve(g, name)
	if bare := stripFormat(name); err != nil && bare != name {
		if id, err := plan.Resolve(g, bare); err == nil {
			return id, nil
		}
	}
	return id, err
}

// logInternal reports a failure that is the server's, not the caller's,
// to the operator: the caller sees only its message.
func (s *Server) logInternal(err error) {
	if err == nil || s.opt.Log == nil {
		return
	}
	if st, _ := status(err); st == http.StatusInternalServerError {
		fmt.Fprintf(s.opt.Log, "stem serve: %v\n", err)
	}
}

// status maps an error to its HTTP status and code.
func status(err error) (int, string) {
	var re *requestError
	switch {
	case errors.As(err, &re):
		return re.status, re.code
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, "timeout"
	case errors.Is(err, context.Canceled):
		// The client went away; nobody reads this, but the metrics do.
		return 499, "cancelled"
	}
	return http.StatusInternalServerError, "internal"
}

func writeError(w http.ResponseWriter, err error) {
	st, code := status(err)
	if st == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "1")
	}
	msg := err.Error()
	if code == "timeout" {
		msg = "the question took longer than the server's deadline: " + msg
	}
	writeJSON(w, st, errorBody{Error: msg, Code: code})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	e := json.NewEncoder(w)
	e.SetEscapeHTML(false) // chains read "a -> b", as stem ask --json prints them
	// The status is sent; a client gone mid-body cannot be told more.
	_ = e.Encode(v)
}
