// Package serve keeps one stem process warm and answers over the network:
// a JSON HTTP API, MCP tools for LLM agents (over streamable HTTP on the
// same server, or over stdio), Prometheus metrics and an evidence viewer
// page, all over one plan.Pipeline per planner, loaded once.
//
// It is safe by default: callers outside the machine need --listen, every
// data route can require a bearer token, bodies, replies, questions, time
// and concurrent questions are bounded (a question's slot is held until
// its reply is written; the calls of an MCP batch are answered one after
// the other within one deadline and one reply bound, mcpHTTP), no request
// names a file, no page may frame the viewer, and shutdown lets in-flight
// questions finish (Abort cuts it short), over HTTP and stdio alike. No
// input knocks it over: every error is JSON with a stable code (a JSON-RPC
// error on /mcp; jsonErrors rewrites what the mux and the file server
// write as text, jsonConns what net/http writes itself), an MCP id comes
// back exactly as sent, a question of no words is the caller's error,
// invisible format characters are dropped from questions and names, and
// an MCP stdio session answers a bad line and goes on (ServeStdio); the
// hostile-input suite and the fuzz targets hold it to that.
//
// The package depends on plan (the pipeline) and kg (neighbours); cmd/stem
// builds the Backend from its flags and nothing here reads a flag.
package serve

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/plan"
)

// Backend is what a server answers with, loaded once.
type Backend struct {
	// Graph is the shared KG the neighbours route reads.
	Graph kg.Reader
	// Open builds the pipeline that plans with the named planner. The
	// server calls it once per name, on first use, and closes what it
	// opened on Close.
	Open func(ctx context.Context, planner string) (*plan.Pipeline, func() error, error)
	// Planners are the planner names a request may choose, the default
	// first.
	Planners []string
	// Search finds up to k entities for a free-text query, best first.
	Search func(ctx context.Context, query string, k int) ([]Entity, error)
}

// Entity is one entity search hit.
type Entity struct {
	Name  string  `json:"name"`
	Score float32 `json:"score"`
}

// Options bound what a server accepts. The zero value of a field means
// its default.
type Options struct {
	// Token, when not empty, is required as "Authorization: Bearer TOKEN"
	// on every route but the health checks and the viewer's static files.
	Token string
	// MaxBody caps a request body in bytes (DefaultMaxBody).
	MaxBody int64
	// MaxReply caps a reply in bytes (DefaultMaxReply): a request whose
	// reply would be longer is refused with how to narrow it. The calls
	// of an MCP batch share one bound.
	MaxReply int
	// Timeout is a question's deadline (DefaultTimeout); the calls of an
	// MCP batch over HTTP share one.
	Timeout time.Duration
	// MaxConcurrent bounds the questions answered at once, each counted
	// until its reply is written (over HTTP) and each call of an MCP
	// batch counted; beyond it a question is refused with 503 and
	// Retry-After (DefaultMaxConcurrent).
	MaxConcurrent int
	// HeaderTimeout is how long a client may take to send its request
	// headers, the bound on slow clients (DefaultHeaderTimeout); the whole
	// request may take three times it.
	HeaderTimeout time.Duration
	// Grace is how long shutdown waits for in-flight requests
	// (DefaultGrace).
	Grace time.Duration
	// Loopback accepts only Host headers that name this machine, against
	// DNS rebinding; set it when listening on a loopback address.
	Loopback bool
	// Version is reported by MCP and /healthz.
	Version string
	// Log, when not nil, receives the failures that are the server's own
	// (a KG endpoint down, a pipeline error), one line each.
	Log io.Writer
}

// Defaults of Options.
const (
	DefaultMaxBody       = 64 << 10
	DefaultMaxReply      = 8 << 20
	DefaultTimeout       = 30 * time.Second
	DefaultMaxConcurrent = 64
	DefaultHeaderTimeout = 5 * time.Second
	DefaultGrace         = 10 * time.Second
)

func (o Options) withDefaults() Options {
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.MaxReply <= 0 {
		o.MaxReply = DefaultMaxReply
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = DefaultMaxConcurrent
	}
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = DefaultHeaderTimeout
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	return o
}

// Server answers questions over HTTP and MCP. Create it with New, give it
// its Backend with Load (until then the API answers 503, so a large KG can
// load while health checks already answer), and run it with Serve.
type Server struct {
	opt     Options
	backend atomic.Pointer[Backend]
	// slots holds one token per question being answered.
	slots    chan struct{}
	draining atomic.Bool
	metrics  *metrics
	mcp      *mcp.Server
	handler  http.Handler

	mu        sync.Mutex
	pipelines map[string]*plan.Pipeline
	closers   []func() error

	// abort is closed by Abort: shutdown stops waiting for requests.
	abort     chan struct{}
	abortOnce sync.Once
}

// New returns a server that answers nothing until Load.
func New(o Options) *Server {
	o = o.withDefaults()
	s := &Server{opt: o, slots: make(chan struct{}, o.MaxConcurrent), metrics: newMetrics(), pipelines: map[string]*plan.Pipeline{}, abort: make(chan struct{})}
	s.mcp = s.newMCP()
	s.handler = s.routes()
	return s
}

// Load opens b's default pipeline and makes b the server's backend: from
// now on it is ready.
func (s *Server) Load(ctx context.Context, b Backend) error {
	if b.Open == nil || len(b.Planners) == 0 {
		return errors.New("serve: the backend needs Open and at least one planner")
	}
	if _, err := s.pipeline(ctx, &b, ""); err != nil {
		return err
	}
	s.backend.Store(&b)
	return nil
}

// Handler returns the HTTP handler of every route, for tests and for
// callers that run their own http.Server. The errors net/http writes
// itself (431, a malformed request's 400) are JSON only under Serve,
// which wraps the listener's connections.
func (s *Server) Handler() http.Handler { return s.handler }

// MCP returns the MCP server, to run over stdio (`stem serve --mcp-stdio`).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Close closes the pipelines the server opened.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, c := range s.closers {
		errs = append(errs, c())
	}
	s.closers, s.pipelines = nil, map[string]*plan.Pipeline{}
	return errors.Join(errs...)
}

// Serve answers on ln until ctx is done, then shuts down: it stops
// accepting connections, reports not ready, and waits up to Options.Grace
// for the requests in flight, which finish whole.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.opt.HeaderTimeout,
		// A body is at most MaxBody bytes: a client that takes three
		// header timeouts to send it is holding a connection, not asking.
		ReadTimeout:    3 * s.opt.HeaderTimeout,
		WriteTimeout:   s.opt.Timeout + 10*time.Second,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: maxHeaderBytes,
		BaseContext:    func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	// Even the errors net/http writes itself are JSON.
	go func() { errc <- hs.Serve(jsonConns{ln}) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	s.draining.Store(true)
	sctx, cancel := context.WithTimeout(context.Background(), s.opt.Grace)
	defer cancel()
	go func() {
		select {
		case <-s.abort:
			cancel()
		case <-sctx.Done():
		}
	}()
	err := hs.Shutdown(sctx)
	<-errc
	if err != nil {
		hs.Close()
		select {
		case <-s.abort:
			return fmt.Errorf("shutdown: requests still running were cut off when asked again to stop: %w", err)
		default:
		}
		return fmt.Errorf("shutdown: requests still running after %s were cut off: %w", s.opt.Grace, err)
	}
	return nil
}

// Abort makes a shutdown in progress (or the next one) stop waiting for
// the requests in flight and cut them off: `stem serve` calls it on a
// second SIGINT or SIGTERM, as a user who presses Ctrl-C twice expects.
func (s *Server) Abort() { s.abortOnce.Do(func() { close(s.abort) }) }

// pipeline returns the pipeline of the named planner ("" = the default),
// opening it on first use.
func (s *Server) pipeline(ctx context.Context, b *Backend, planner string) (*plan.Pipeline, error) {
	if planner == "" {
		planner = b.Planners[0]
	}
	if !slices.Contains(b.Planners, planner) {
		return nil, &requestError{http.StatusBadRequest, "unknown_planner",
			fmt.Sprintf("planner %q is not served here: choose one of %s", planner, strings.Join(b.Planners, ", "))}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.pipelines[planner]; ok {
		return p, nil
	}
	// Opened under the lock: a planner opens once, and the others wait
	// for it rather than open it again.
	p, closeP, err := b.Open(ctx, planner)
	if err != nil {
		if closeP != nil {
			closeP()
		}
		return nil, fmt.Errorf("open the %s planner: %w", planner, err)
	}
	s.pipelines[planner] = p
	s.closers = append(s.closers, closeP)
	return p, nil
}

// authorized reports whether r carries the token, when one is required.
// The scheme's case is ignored, as RFC 7235 says ("bearer TOKEN" is
// "Bearer TOKEN").
func (s *Server) authorized(r *http.Request) bool {
	if s.opt.Token == "" {
		return true
	}
	scheme, got, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	got = strings.TrimSpace(got)
	return ok && strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare([]byte(got), []byte(s.opt.Token)) == 1
}

// IsLocalHost reports whether a host, with or without a port (a Host
// header, a URL's host), names this machine: localhost or a loopback
// address.
func IsLocalHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
