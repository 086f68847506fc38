// Command virtuoso starts, loads and stops a private Virtuoso in a folder,
// for developers and users who want a SPARQL endpoint to point stem at.
// scripts/virtuoso and `task virtuoso` run it; it writes the ini through
// package internal/virtuoso, so tests and this command run one config.
//
//	virtuoso start DIR [--port N] [--http-port N] [--max-rows N]
//	virtuoso load DIR FILE.nt [GRAPH_IRI]
//	virtuoso stop DIR
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/stem-kgqa/stem/internal/virtuoso"
)

// DefaultGraph is the graph load fills when none is named.
const DefaultGraph = "urn:stem:kg"

const usage = `usage:
  virtuoso start DIR [--port N] [--http-port N] [--max-rows N]
      write DIR/virtuoso.ini, start virtuoso-t in the background (pid in
      DIR/virtuoso.pid), wait for its endpoint and print the SPARQL URL
  virtuoso load DIR FILE.nt [GRAPH_IRI]
      bulk-load N-Triples into the graph (default ` + DefaultGraph + `)
  virtuoso stop DIR
      stop the server started in DIR (SIGTERM, then SIGKILL)`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run carries out one command line, printing results to out and progress
// to errw; main is only its exit code.
func run(ctx context.Context, args []string, out, errw io.Writer) error {
	if len(args) == 0 {
		return errors.New("virtuoso: no command\n" + usage)
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	port := fs.Int("port", 0, "isql port (0: a free one)")
	httpPort := fs.Int("http-port", 0, "SPARQL HTTP port (0: a free one)")
	maxRows := fs.Int("max-rows", virtuoso.DefaultResultSetMaxRows, "ResultSetMaxRows")
	timeout := fs.Duration("timeout", 2*time.Minute, "how long start waits for the endpoint")
	// Flags may follow the positional arguments (start DIR --port N).
	var pos []string
	for rest := args[1:]; ; {
		if err := fs.Parse(rest); err != nil {
			return fmt.Errorf("virtuoso %s: %w\n%s", args[0], err, usage)
		}
		if rest = fs.Args(); len(rest) == 0 {
			break
		}
		pos, rest = append(pos, rest[0]), rest[1:]
	}
	switch {
	case args[0] == "start" && len(pos) == 1:
		if err := virtuoso.Available(); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		begin := time.Now()
		s, err := virtuoso.Start(ctx, virtuoso.Options{Dir: pos[0], Port: *port, HTTPPort: *httpPort, ResultSetMaxRows: *maxRows, Detach: true})
		if err != nil {
			return err
		}
		fmt.Fprintf(errw, "virtuoso: pid %d, isql port %d, started in %s; stop with: scripts/virtuoso stop %s\n",
			s.Pid(), s.Port(), time.Since(begin).Round(time.Millisecond), pos[0])
		fmt.Fprintln(out, s.URL())
		return nil
	case args[0] == "load" && (len(pos) == 2 || len(pos) == 3):
		s, err := virtuoso.Attach(pos[0])
		if err != nil {
			return err
		}
		graph := DefaultGraph
		if len(pos) == 3 {
			graph = pos[2]
		}
		begin := time.Now()
		if err := s.Load(ctx, pos[1], graph); err != nil {
			return err
		}
		fmt.Fprintf(out, "loaded %s into <%s> in %s\n", pos[1], graph, time.Since(begin).Round(time.Millisecond))
		return nil
	case args[0] == "stop" && len(pos) == 1:
		s, err := virtuoso.Attach(pos[0])
		if err != nil {
			return err
		}
		if err := s.Stop(); err != nil {
			return err
		}
		fmt.Fprintf(out, "stopped pid %d\n", s.Pid())
		return nil
	}
	return fmt.Errorf("virtuoso: bad arguments %q\n%s", args, usage)
}
