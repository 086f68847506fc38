// Package oxigraph runs a private SPARQL 1.1 endpoint over Oxigraph's
// in-memory store for tests: a second engine beside Virtuoso
// (internal/virtuoso), so that what kg/sparql says of "any SPARQL 1.1
// endpoint" is tested, not assumed.
//
// The endpoint is server.mjs, in this folder, run by Node over the oxigraph
// npm package (Oxigraph compiled to WebAssembly), pinned to Version in
// package.json and package-lock.json; `npm ci` in this folder installs it
// (.ci/run does). Start runs `node server.mjs` as a child in its own
// process group on a free 127.0.0.1 port and returns once it listens;
// Load adds RDF to a named graph by the SPARQL 1.1 Graph Store Protocol;
// Stop ends it by its process id, never by name. Everything is in memory
// and gone when it stops.
//
// Where it differs from Virtuoso, as a client meets it: no row cap (a
// result is never cut), no free-text extension (bif:contains is a syntax
// error, 400), typed literals come back as "literal" with a datatype, and
// without default-graph-uri the default graph is the union of every
// graph (server.mjs asks Oxigraph for that, as Virtuoso does).
//
// This package imports only the standard library, kg and
// internal/childproc; nothing but tests and tools should import it.
package oxigraph

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/stem-kgqa/stem/internal/childproc"
	"github.com/stem-kgqa/stem/kg"
)

// Version is the oxigraph npm package package.json pins.
const Version = "0.5.11"

// Script is the endpoint Start runs, in the package's folder.
const Script = "server.mjs"

// RequireEnv, set to 1, turns the skip of a test that needs the endpoint
// into a failure. CI sets it, so the tests cannot stop running unnoticed
// when Node or the npm package is missing.
const RequireEnv = "STEM_REQUIRE_OXIGRAPH"

// DefaultStartTimeout bounds Start when ctx has no deadline: Node loads
// the WebAssembly and listens in well under a second.
const DefaultStartTimeout = 30 * time.Second

// stopGrace is how long Stop waits after SIGTERM before SIGKILL.
const stopGrace = 5 * time.Second

// Options configure Start. The zero value runs the folder's server.mjs
// with node from $PATH.
type Options struct {
	// Dir holds server.mjs and node_modules (empty: this package's folder,
	// found from the working directory up to the module's root).
	Dir string
	// Node is the Node executable (empty: "node" from $PATH).
	Node string
}

// Server is a running endpoint started by Start.
type Server struct {
	url  string
	pid  int
	http *http.Client
	// done is closed once the child has been reaped; waitErr is its exit
	// status.
	done    chan struct{}
	waitErr error
	log     *tail
	stopped bool
}

// Find returns this package's folder: dir if set, else
// internal/oxigraph under the first folder from the working directory up
// that holds go.mod.
func Find(dir string) (string, error) {
	if dir != "" {
		return filepath.Abs(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("oxigraph: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "internal", "oxigraph"), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("oxigraph: no go.mod in %s or above: give Options.Dir", wd)
		}
	}
}

// Available reports whether the endpoint can run from opts: nil when node
// is on PATH and the folder holds server.mjs and the pinned oxigraph
// package (npm ci there installs it).
func Available(opts Options) error {
	node := opts.Node
	if node == "" {
		node = "node"
	}
	if _, err := exec.LookPath(node); err != nil {
		return fmt.Errorf("oxigraph: %s not found: install Node.js", node)
	}
	dir, err := Find(opts.Dir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, Script)); err != nil {
		return fmt.Errorf("oxigraph: %w", err)
	}
	pj := filepath.Join(dir, "node_modules", "oxigraph", "package.json")
	b, err := os.ReadFile(pj)
	if err != nil {
		return fmt.Errorf("oxigraph: the npm package is not installed (run npm ci in %s): %w", dir, err)
	}
	var p struct{ Version string }
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("oxigraph: %s: %w", pj, err)
	}
	if p.Version != Version {
		return fmt.Errorf("oxigraph: %s is version %q, want %s (run npm ci in %s)", pj, p.Version, Version, dir)
	}
	return nil
}

// Start runs server.mjs on a free 127.0.0.1 port as a child in its own
// process group and returns once it listens. ctx bounds the wait
// (DefaultStartTimeout when it has no deadline), not the server's life.
// If the server exits or does not listen in time it is killed and the
// error quotes the end of its output.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if err := Available(opts); err != nil {
		return nil, err
	}
	dir, err := Find(opts.Dir)
	if err != nil {
		return nil, err
	}
	node := opts.Node
	if node == "" {
		node = "node"
	}
	cmd := exec.Command(node, Script, "--host", "127.0.0.1", "--port", "0")
	cmd.Dir = dir
	cmd.SysProcAttr = childproc.Attr()
	s := &Server{log: &tail{}, http: &http.Client{}}
	cmd.Stderr = s.log
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("oxigraph: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("oxigraph: run %s %s: %w", node, Script, err)
	}
	s.pid = cmd.Process.Pid
	s.done = make(chan struct{})
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			if u, ok := strings.CutPrefix(line, "listening "); ok {
				select {
				case listening <- u:
				default:
				}
				continue
			}
			s.log.Write([]byte(line + "\n"))
		}
		// Wait only once the output is read, as StdoutPipe requires.
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultStartTimeout)
		defer cancel()
	}
	select {
	case s.url = <-listening:
		return s, nil
	case <-s.done:
		return nil, fmt.Errorf("oxigraph: %s exited before it listened (%v); its output:\n%s", Script, s.waitErr, s.log)
	case <-ctx.Done():
		s.Kill()
		return nil, fmt.Errorf("oxigraph: %s did not listen: %w; its output:\n%s", Script, ctx.Err(), s.log)
	}
}

// URL returns the SPARQL endpoint, http://127.0.0.1:PORT/sparql.
func (s *Server) URL() string { return s.url }

// Pid returns the server's process id (also its process group id).
func (s *Server) Pid() int { return s.pid }

// storeURL is the Graph Store Protocol URL of graph.
func (s *Server) storeURL(graph string) string {
	return strings.TrimSuffix(s.url, "/sparql") + "/store?graph=" + url.QueryEscape(graph)
}

// Load adds an RDF file to the named graph: N-Triples (.nt), N-Quads
// (.nq, whose own graphs are kept) or Turtle (.ttl), optionally gzipped
// (.gz), chosen by the file's extension; any other name is read as
// N-Triples.
func (s *Server) Load(ctx context.Context, file, graphIRI string) error {
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("oxigraph: load %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	name := file
	if strings.HasSuffix(name, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("oxigraph: load %s: %w", file, err)
		}
		defer zr.Close()
		r, name = zr, strings.TrimSuffix(name, ".gz")
	}
	typ := "application/n-triples"
	switch filepath.Ext(name) {
	case ".nq":
		typ = "application/n-quads"
	case ".ttl":
		typ = "text/turtle"
	}
	if err := s.post(ctx, graphIRI, typ, r); err != nil {
		return fmt.Errorf("oxigraph: load %s: %w", file, err)
	}
	return nil
}

// LoadKG adds g to the named graph, its names under Freebase-style IRIs
// as `stem kg export` writes them (kg.WriteNTriples), streamed to the
// server.
func (s *Server) LoadKG(ctx context.Context, g kg.Reader, graphIRI string) error {
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 1<<16)
		_, err := kg.WriteNTriples(ctx, w, g, "")
		if err == nil {
			err = w.Flush()
		}
		pw.CloseWithError(err)
	}()
	err := s.post(ctx, graphIRI, "application/n-triples", pr)
	pr.CloseWithError(io.ErrClosedPipe) // ends the writer if the post failed early
	if err != nil {
		return fmt.Errorf("oxigraph: load a KG into <%s>: %w", graphIRI, err)
	}
	return nil
}

// post sends body to the graph store as graph's new triples.
func (s *Server) post(ctx context.Context, graphIRI, typ string, body io.Reader) error {
	if graphIRI == "" {
		return errors.New("no graph IRI")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.storeURL(graphIRI), body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", typ)
	resp, err := s.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4000))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("graph store: %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}

// Stop ends the server: SIGTERM to its process group, SIGKILL if it is
// still there after a grace period, and waits for it to be gone.
// Stopping a stopped server does nothing.
func (s *Server) Stop() error {
	if s.stopped {
		return nil
	}
	s.stopped = true
	if err := s.signal(syscall.SIGTERM); err == nil {
		return nil
	}
	return s.Kill()
}

// Kill sends SIGKILL to the server's process group and waits for it to
// be gone.
func (s *Server) Kill() error { return s.signal(syscall.SIGKILL) }

// signal sends sig to the server's process group, unless it has ended,
// and waits up to stopGrace for it to end.
func (s *Server) signal(sig syscall.Signal) error {
	if s.gone() {
		return nil
	}
	if err := syscall.Kill(-s.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("oxigraph: signal %v to pid %d: %w", sig, s.pid, err)
	}
	select {
	case <-s.done:
		return nil
	case <-time.After(stopGrace):
		return fmt.Errorf("oxigraph: pid %d still running %v after %v", s.pid, stopGrace, sig)
	}
}

func (s *Server) gone() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// tail keeps the last bytes a server wrote, for error messages.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailBytes = 4000

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailBytes {
		t.buf = t.buf[len(t.buf)-tailBytes:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buf) == 0 {
		return "(nothing)"
	}
	return string(t.buf)
}
