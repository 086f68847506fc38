package virtuoso

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/stem-kgqa/stem/internal/childproc"
	"github.com/stem-kgqa/stem/kg"
)

// The programs Debian's virtuoso-opensource package installs.
const (
	ServerBinary = "virtuoso-t"
	ISQLBinary   = "isql-vt"
)

// Files Start writes into the server's folder.
const (
	IniFile = "virtuoso.ini"
	PidFile = "virtuoso.pid"
	OutFile = "virtuoso.out" // the server's own output: with -f its log goes there
)

// DefaultResultSetMaxRows is Virtuoso's own default row cap for SPARQL
// results, kept so tests see what a stock server does.
const DefaultResultSetMaxRows = 10000

// DefaultStartTimeout bounds Start when ctx has no deadline: a stock
// server answers within 2-6 s, so a minute means it is stuck.
const DefaultStartTimeout = time.Minute

// stopGrace is how long Stop waits after SIGTERM before SIGKILL; Debian's
// 7.2.5 finishes its quick shutdown (a checkpoint) in about 1.6 s.
const stopGrace = 10 * time.Second

// The account isql-vt logs in with: a fresh database has only dba/dba,
// and the server listens on 127.0.0.1 only.
const (
	dbaUser     = "dba"
	dbaPassword = "dba"
)

// Options configure Start. The zero value is a server on free ports in a
// temporary folder removed by Stop.
type Options struct {
	// Dir holds the ini, the database and the logs. Empty means a new
	// temporary folder, removed by Stop; a given Dir is kept.
	Dir string
	// Port (isql, ODBC) and HTTPPort (the SPARQL endpoint) are bound on
	// 127.0.0.1; 0 picks a free one.
	Port, HTTPPort int
	// ResultSetMaxRows caps the rows of one SPARQL result (0 means
	// DefaultResultSetMaxRows). Virtuoso cuts longer results silently.
	ResultSetMaxRows int
	// MaxQueryExecutionTime bounds one SPARQL query (0 means 60 s, the
	// Debian default); Virtuoso rounds it to whole seconds.
	MaxQueryExecutionTime time.Duration
	// NumberOfBuffers is the page cache in 8 KB pages (0 means 4000,
	// about 32 MB: enough for test KGs, and small next to Debian's
	// 10,000, so parallel test servers fit on a CI machine).
	NumberOfBuffers int
	// DirsAllowed are further folders the server may read and write
	// (Dir always is). Load does not need them: it links its file into
	// Dir.
	DirsAllowed []string
	// Detach starts the server in a session of its own, so it outlives
	// the calling process (scripts/virtuoso start); stop it later with
	// Attach(dir) and Stop. Its pid is in Dir/virtuoso.pid either way.
	Detach bool
}

func (o Options) withDefaults() Options {
	if o.ResultSetMaxRows <= 0 {
		o.ResultSetMaxRows = DefaultResultSetMaxRows
	}
	if o.MaxQueryExecutionTime <= 0 {
		o.MaxQueryExecutionTime = 60 * time.Second
	}
	if o.NumberOfBuffers <= 0 {
		o.NumberOfBuffers = 4000
	}
	return o
}

// Server is a running Virtuoso started by Start or found by Attach.
type Server struct {
	dir            string
	ownDir         bool
	port, httpPort int
	pid            int
	// done is closed once the child has been reaped; waitErr is its exit
	// status. Both are nil for a server found by Attach, which is not our
	// child: it is polled instead.
	done    chan struct{}
	waitErr error
	stopped bool
}

// Available reports whether Debian's Virtuoso is installed: nil when
// virtuoso-t and isql-vt are on PATH.
func Available() error {
	for _, b := range []string{ServerBinary, ISQLBinary} {
		if _, err := exec.LookPath(b); err != nil {
			return fmt.Errorf("%s not found: apt-get install virtuoso-opensource", b)
		}
	}
	return nil
}

// Start writes an ini into opts.Dir (or a new temporary folder), starts
// virtuoso-t in the foreground as a child in its own process group, and
// returns once the SPARQL endpoint answers an ASK query. ctx bounds the
// wait (DefaultStartTimeout when it has no deadline), not the server's
// life. If the server dies or does not answer in time it is killed and
// the error quotes the end of its log.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	s := &Server{dir: opts.Dir}
	if s.dir == "" {
		d, err := os.MkdirTemp("", "virtuoso-")
		if err != nil {
			return nil, fmt.Errorf("virtuoso: temporary folder: %w", err)
		}
		s.dir, s.ownDir = d, true
	} else if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, fmt.Errorf("virtuoso: folder %s: %w", s.dir, err)
	}
	fail := func(err error) (*Server, error) {
		if s.ownDir {
			os.RemoveAll(s.dir)
		}
		return nil, err
	}
	abs, err := filepath.Abs(s.dir)
	if err != nil {
		return fail(fmt.Errorf("virtuoso: folder %s: %w", s.dir, err))
	}
	s.dir = abs
	for _, d := range append([]string{s.dir}, opts.DirsAllowed...) {
		// The ini separates DirsAllowed by commas and starts comments with
		// ';', and Load quotes the folder in SQL.
		if strings.ContainsAny(d, ",;'\\\n\r") {
			return fail(fmt.Errorf("virtuoso: folder %q: a path with , ; ' \\ or a newline cannot be written to virtuoso.ini", d))
		}
	}
	if pid, err := readPid(s.dir); err == nil && isVirtuoso(pid) {
		return fail(fmt.Errorf("virtuoso: %s: a server (pid %d) is running there already; stop it first", s.dir, pid))
	}
	if s.port, err = pickPort(opts.Port, 0); err != nil {
		return fail(err)
	}
	if s.httpPort, err = pickPort(opts.HTTPPort, s.port); err != nil {
		return fail(err)
	}
	// An empty web root: the HTTP server must not serve the database files.
	if err := os.MkdirAll(filepath.Join(s.dir, "www"), 0o755); err != nil {
		return fail(fmt.Errorf("virtuoso: %w", err))
	}
	ini := filepath.Join(s.dir, IniFile)
	if err := os.WriteFile(ini, []byte(iniText(s.dir, s.port, s.httpPort, opts)), 0o644); err != nil {
		return fail(fmt.Errorf("virtuoso: write %s: %w", ini, err))
	}
	outPath := filepath.Join(s.dir, OutFile)
	out, err := os.Create(outPath)
	if err != nil {
		return fail(fmt.Errorf("virtuoso: %w", err))
	}
	defer out.Close() // the child holds its own descriptor
	cmd := exec.Command(ServerBinary, "-f", "-c", ini)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = childproc.Attr()
	if opts.Detach {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("virtuoso: run %s: %w", ServerBinary, err))
	}
	s.pid = cmd.Process.Pid
	s.done = make(chan struct{})
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	if err := os.WriteFile(filepath.Join(s.dir, PidFile), []byte(strconv.Itoa(s.pid)+"\n"), 0o644); err != nil {
		s.Kill()
		return fail(fmt.Errorf("virtuoso: write pid file: %w", err))
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultStartTimeout)
		defer cancel()
	}
	if err := s.waitReady(ctx); err != nil {
		s.Kill()
		tail := logTail(outPath, 15)
		return fail(fmt.Errorf("virtuoso: start in %s: %w; end of %s:\n%s", s.dir, err, OutFile, tail))
	}
	return s, nil
}

// waitReady polls the endpoint until this server answers, the child
// exits or ctx ends.
func (s *Server) waitReady(ctx context.Context) error {
	client := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	ini := filepath.Join(s.dir, IniFile)
	var last error
	for {
		if last = ask(ctx, client, s.URL(), ini); last == nil {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("%s exited before its endpoint answered (%v; last try: %v)", ServerBinary, s.waitErr, last)
		case <-ctx.Done():
			return fmt.Errorf("endpoint %s did not answer: %w (last try: %v)", s.URL(), ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// ask asks the endpoint for the path of its ini (Virtuoso's
// bif:virtuoso_ini_path) and wants ini back: the HTTP port answers before
// the SPARQL service behind it is ready, and a port taken by another
// server between pickPort and the bind would otherwise pass for ours.
func ask(ctx context.Context, client *http.Client, endpoint, ini string) error {
	q := "SELECT (bif:virtuoso_ini_path() AS ?ini) {}"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"?query="+url.QueryEscape(q), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/sparql-results+json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, body)
	}
	// SPARQL's JSON results, read here so that the test harness of every
	// backend imports none of them.
	var res struct {
		Results struct {
			Bindings []map[string]struct{ Value string }
		}
	}
	if err := json.Unmarshal(body, &res); err != nil {
		return fmt.Errorf("not SPARQL JSON results: %w (%.200s)", err, body)
	}
	if b := res.Results.Bindings; len(b) != 1 || b[0]["ini"].Value != ini {
		return fmt.Errorf("the port is answered by another server (%.200s)", body)
	}
	return nil
}

// Attach finds the server a detached Start left running in dir, by its
// pid file and ini, so another process can Load into it or Stop it. The
// pid is checked to be a virtuoso-t (where /proc exists), so a stale pid
// file never gets another program signalled.
func Attach(dir string) (*Server, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("virtuoso: folder %s: %w", dir, err)
	}
	pid, err := readPid(abs)
	if err != nil {
		return nil, err
	}
	if !isVirtuoso(pid) {
		return nil, fmt.Errorf("virtuoso: %s: pid %d from %s is not a running %s (stale pid file?)", abs, pid, PidFile, ServerBinary)
	}
	ini := filepath.Join(abs, IniFile)
	port, httpPort, err := readPorts(ini)
	if err != nil {
		return nil, err
	}
	return &Server{dir: abs, port: port, httpPort: httpPort, pid: pid}, nil
}

// URL returns the SPARQL endpoint, http://127.0.0.1:PORT/sparql.
func (s *Server) URL() string {
	return "http://127.0.0.1:" + strconv.Itoa(s.httpPort) + "/sparql"
}

// Dir returns the folder holding the ini, the database and the logs.
func (s *Server) Dir() string { return s.dir }

// Pid returns the server's process id (also its process group id).
func (s *Server) Pid() int { return s.pid }

// Port returns the isql (SQL) port; HTTPPort the SPARQL one.
func (s *Server) Port() int { return s.port }

// HTTPPort returns the port of the SPARQL endpoint.
func (s *Server) HTTPPort() int { return s.httpPort }

// Exec runs SQL statements (separated by ';') through isql-vt and returns
// what it printed. isql-vt exits 0 even when a statement fails and goes
// on with the next, so a failure is found by its "*** Error" report and
// returned with that text; the output of the statements that ran is
// returned too.
func (s *Server) Exec(ctx context.Context, sql string) (string, error) {
	cmd := exec.CommandContext(ctx, ISQLBinary, "127.0.0.1:"+strconv.Itoa(s.port), dbaUser, dbaPassword, "exec="+sql)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if i := strings.Index(stderr.String(), "*** Error"); i >= 0 {
		return stdout.String(), fmt.Errorf("virtuoso: isql %.80q: %s", sql, strings.TrimSpace(stderr.String()[i:]))
	}
	if err != nil {
		return stdout.String(), fmt.Errorf("virtuoso: isql %.80q: %w: %s", sql, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// Load bulk-loads an RDF file (N-Triples; Virtuoso picks the parser by
// extension, .nt, .ttl, .nq, optionally .gz) into the named graph with
// ld_dir, rdf_loader_run and a checkpoint, then reads the file's row of
// DB.DBA.LOAD_LIST and returns its error, if any. The literals' words
// are indexed too (Virtuoso's free-text index, which bif:contains reads:
// kg/sparql finds names by it), as the field's Freebase set-up does. The
// file is linked
// into a fresh folder under Dir as data.EXT: that folder is always
// allowed, and ld_dir's LIKE pattern then matches exactly one file.
func (s *Server) Load(ctx context.Context, file, graphIRI string) error {
	if graphIRI == "" || strings.ContainsAny(graphIRI, " \t\r\n'\"\\<>{}|^`") {
		return fmt.Errorf("virtuoso: load %s: graph IRI %q is empty or not an IRI", file, graphIRI)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return fmt.Errorf("virtuoso: load %s: %w", file, err)
	}
	if st, err := os.Stat(abs); err != nil {
		return fmt.Errorf("virtuoso: load %w", err)
	} else if st.IsDir() {
		return fmt.Errorf("virtuoso: load %s: a folder, want a file", file)
	}
	loads := filepath.Join(s.dir, "load")
	if err := os.MkdirAll(loads, 0o755); err != nil {
		return fmt.Errorf("virtuoso: load %s: %w", file, err)
	}
	// A fresh folder per load: LOAD_LIST keys rows by path, and ld_dir
	// skips a path it has seen, even in an earlier process.
	ldir, err := os.MkdirTemp(loads, "")
	if err != nil {
		return fmt.Errorf("virtuoso: load %s: %w", file, err)
	}
	defer os.RemoveAll(ldir)
	name := "data" + rdfExt(abs)
	if err := os.Symlink(abs, filepath.Join(ldir, name)); err != nil {
		return fmt.Errorf("virtuoso: load %s: %w", file, err)
	}
	path := filepath.Join(ldir, name)
	const mark = "LOADLIST|"
	sql := fmt.Sprintf("DB.DBA.RDF_OBJ_FT_RULE_ADD(null, null, 'stem'); ld_dir(%s, %s, %s); rdf_loader_run(); DB.DBA.VT_INC_INDEX_DB_DBA_RDF_OBJ(); checkpoint; "+
		"select concat('%s', cast(ll_state as varchar), '|', coalesce(ll_error, '')) from DB.DBA.LOAD_LIST where ll_file = %s;",
		sqlString(ldir), sqlString(name), sqlString(graphIRI), mark, sqlString(path))
	out, err := s.Exec(ctx, sql)
	if err != nil {
		return fmt.Errorf("virtuoso: load %s: %w", file, err)
	}
	for line := range strings.Lines(out) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), mark)
		if !ok {
			continue
		}
		state, msg, _ := strings.Cut(rest, "|")
		if msg != "" {
			return fmt.Errorf("virtuoso: load %s into <%s>: %s", file, graphIRI, msg)
		}
		if state != "2" { // 2 is done; 0 waiting, 1 loading
			return fmt.Errorf("virtuoso: load %s into <%s>: load list state %s after rdf_loader_run, want 2 (done)", file, graphIRI, state)
		}
		return nil
	}
	return fmt.Errorf("virtuoso: load %s: ld_dir added no row to DB.DBA.LOAD_LIST (isql printed:\n%s)", file, out)
}

// LoadKG loads g into the named graph, its names under Freebase-style
// IRIs as `stem kg export` writes them (kg.WriteNTriples), through an
// N-Triples file in the server's folder.
func (s *Server) LoadKG(ctx context.Context, g kg.Reader, graphIRI string) error {
	f, err := os.CreateTemp(s.dir, "kg-*.nt")
	if err != nil {
		return fmt.Errorf("virtuoso: load a KG: %w", err)
	}
	defer os.Remove(f.Name())
	w := bufio.NewWriter(f)
	_, err = kg.WriteNTriples(ctx, w, g, "")
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("virtuoso: write %s: %w", f.Name(), err)
	}
	return s.Load(ctx, f.Name(), graphIRI)
}

// Stop ends the server: SIGTERM to its process group, SIGKILL if it is
// still there after a grace period, then waits for it to be gone and
// removes the pid file, and the folder when Start made it. Stopping a
// stopped server does nothing.
func (s *Server) Stop() error {
	if s.stopped {
		return nil
	}
	var errs []error
	if !s.gone() {
		if err := syscall.Kill(-s.pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("virtuoso: stop pid %d: %w", s.pid, err))
		}
		if !s.waitGone(stopGrace) {
			syscall.Kill(-s.pid, syscall.SIGKILL)
			if !s.waitGone(stopGrace) {
				errs = append(errs, fmt.Errorf("virtuoso: pid %d still running after SIGKILL", s.pid))
			}
		}
	}
	s.stopped = true
	if err := os.Remove(filepath.Join(s.dir, PidFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, fmt.Errorf("virtuoso: %w", err))
	}
	if s.ownDir {
		if err := os.RemoveAll(s.dir); err != nil {
			errs = append(errs, fmt.Errorf("virtuoso: remove %s: %w", s.dir, err))
		}
	}
	return errors.Join(errs...)
}

// Kill sends SIGKILL to the server's process group at once and waits for
// it to be gone, with no checkpoint: fault tests use it to lose the
// endpoint mid-run. Stop still removes the files afterwards.
func (s *Server) Kill() error {
	if s.gone() {
		return nil
	}
	if err := syscall.Kill(-s.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("virtuoso: kill pid %d: %w", s.pid, err)
	}
	if !s.waitGone(stopGrace) {
		return fmt.Errorf("virtuoso: pid %d still running after SIGKILL", s.pid)
	}
	return nil
}

// gone reports whether the server process has ended.
func (s *Server) gone() bool {
	if s.done != nil {
		select {
		case <-s.done:
			return true
		default:
			return false
		}
	}
	return !alive(s.pid)
}

// waitGone waits up to d for the process to end.
func (s *Server) waitGone(d time.Duration) bool {
	if s.done != nil {
		select {
		case <-s.done:
			return true
		case <-time.After(d):
			return false
		}
	}
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if !alive(s.pid) {
			return true
		}
	}
	return !alive(s.pid)
}

// alive reports whether pid runs: a zombie (ended, not yet reaped by
// its parent) counts as ended.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return false
		}
	}
	return true
}

// isVirtuoso reports whether pid is a live virtuoso-t. Without /proc it
// trusts the pid file.
func isVirtuoso(pid int) bool {
	if pid <= 0 || !alive(pid) {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist) && !dirExists("/proc")
	}
	argv0, _, _ := bytes.Cut(cmdline, []byte{0})
	return filepath.Base(string(argv0)) == ServerBinary
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// readPid reads dir's pid file.
func readPid(dir string) (int, error) {
	p := filepath.Join(dir, PidFile)
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, fmt.Errorf("virtuoso: %w (is a server started in %s?)", err, dir)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("virtuoso: %s: not a process id: %q", p, strings.TrimSpace(string(b)))
	}
	return pid, nil
}

// pickPort returns want, or a free 127.0.0.1 port other than avoid. The
// port is free when asked; another program may take it before the
// server binds it, which Start then reports with the server's log.
func pickPort(want, avoid int) (int, error) {
	if want < 0 || want > 65535 {
		return 0, fmt.Errorf("virtuoso: port %d out of range", want)
	}
	if want > 0 {
		return want, nil
	}
	for range 10 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("virtuoso: find a free port: %w", err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if p != avoid {
			return p, nil
		}
	}
	return 0, errors.New("virtuoso: find a free port: got the same port ten times")
}

// iniText is the whole virtuoso.ini: Debian's template cut to what a
// private server needs. Every file lives in dir; both ports are bound to
// 127.0.0.1, so the dba/dba account is never reachable from outside.
func iniText(dir string, port, httpPort int, o Options) string {
	f := func(name string) string { return filepath.Join(dir, name) }
	allowed := append([]string{dir}, o.DirsAllowed...)
	secs := int((o.MaxQueryExecutionTime + time.Second - 1) / time.Second)
	var b strings.Builder
	fmt.Fprintf(&b, `; Written by stem's internal/virtuoso for a private server; rewritten on each start.
[Database]
DatabaseFile       = %s
ErrorLogFile       = %s
LockFile           = %s
TransactionFile    = %s
xa_persistent_file = %s
ErrorLogLevel      = 7
FileExtend         = 200
MaxCheckpointRemap = 2000
Striping           = 0
TempStorage        = TempDatabase

[TempDatabase]
DatabaseFile       = %s
TransactionFile    = %s
MaxCheckpointRemap = 2000
Striping           = 0

[Parameters]
ServerPort           = 127.0.0.1:%d
DisableUnixSocket    = 1
DisableTcpSocket     = 0
MaxClientConnections = 10
CheckpointInterval   = 60
O_DIRECT             = 0
CaseMode             = 2
DirsAllowed          = %s
NumberOfBuffers      = %d
MaxDirtyBuffers      = %d
ThreadsPerQuery      = 4

[HTTPServer]
ServerPort           = 127.0.0.1:%d
ServerRoot           = %s
MaxClientConnections = 10
ServerThreads        = 10
KeepAliveTimeout     = 10
Charset              = UTF-8

[SPARQL]
ResultSetMaxRows           = %d
MaxQueryCostEstimationTime = 400
MaxQueryExecutionTime      = %d
`, f("virtuoso.db"), f("virtuoso.log"), f("virtuoso.lck"), f("virtuoso.trx"), f("virtuoso.pxa"),
		f("virtuoso-temp.db"), f("virtuoso-temp.trx"),
		port, strings.Join(allowed, ", "), o.NumberOfBuffers, o.NumberOfBuffers*3/4,
		httpPort, f("www"), o.ResultSetMaxRows, secs)
	return b.String()
}

// readPorts reads the two ServerPort keys back from an ini iniText wrote.
func readPorts(ini string) (port, httpPort int, err error) {
	f, err := os.Open(ini)
	if err != nil {
		return 0, 0, fmt.Errorf("virtuoso: %w", err)
	}
	defer f.Close()
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			section = strings.Trim(line, "[]")
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(key) != "ServerPort" {
			continue
		}
		val = strings.TrimSpace(val)
		if i := strings.LastIndexByte(val, ':'); i >= 0 {
			val = val[i+1:]
		}
		n, perr := strconv.Atoi(val)
		if perr != nil {
			return 0, 0, fmt.Errorf("virtuoso: %s: [%s] ServerPort %q: %w", ini, section, val, perr)
		}
		switch section {
		case "Parameters":
			port = n
		case "HTTPServer":
			httpPort = n
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, fmt.Errorf("virtuoso: %s: %w", ini, err)
	}
	if port == 0 || httpPort == 0 {
		return 0, 0, fmt.Errorf("virtuoso: %s: no ServerPort in [Parameters] or [HTTPServer]", ini)
	}
	return port, httpPort, nil
}

// rdfExt keeps the extension Virtuoso's loader chooses its parser by
// (".nt", ".ttl", ".nt.gz"); a name without a plain one loads as ".nt".
func rdfExt(path string) string {
	base := filepath.Base(path)
	ext := filepath.Ext(base)
	if ext == ".gz" {
		ext = filepath.Ext(strings.TrimSuffix(base, ext)) + ext
	}
	for _, c := range ext {
		if !(c == '.' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return ".nt"
		}
	}
	if ext == "" || ext == ".gz" {
		return ".nt" + ext
	}
	return ext
}

// sqlString quotes s as a Virtuoso SQL string literal.
func sqlString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// logTail returns the last n lines of the file at path, or why it cannot.
func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
