package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"
)

// RunOptions are what Run serves with, beside the server's Options.
type RunOptions struct {
	Options
	// Listen is the address answered on; a loopback one lets requests in
	// without a token (Options.Loopback).
	Listen string
	// Stdio, when set, serves the MCP tools over In and Out instead of
	// HTTP (stem serve --mcp-stdio).
	Stdio bool
	In    io.Reader
	Out   io.Writer
	// Stop delivers the process's stop signals: the first also ends ctx
	// and lets the questions in flight finish within Grace, a second cuts
	// them off.
	Stop <-chan os.Signal
}

// Run answers until ctx ends: it listens first (so /readyz says when it
// is ready), then has load hand the server its pipelines, and reports on
// log where it answers and when it stops. load returns the function that
// releases what it loaded.
func Run(ctx context.Context, o RunOptions, load func(ctx context.Context, srv *Server) (func() error, error), log io.Writer) error {
	opts := o.Options
	opts.Log = log
	if tok := strings.TrimSpace(opts.Token); tok != opts.Token {
		// A token read from a mounted secret file ends with a newline
		// that no client sends: every one was locked out.
		if tok == "" {
			return errors.New("serve: the token is only whitespace")
		}
		fmt.Fprintf(log, "stem serve: WARNING: the token had whitespace around it (%d bytes, a newline from a secret file?); it was trimmed to its %d bytes between\n", len(opts.Token), len(tok))
		opts.Token = tok
	}
	if o.Stdio {
		return runStdio(ctx, o, opts, load, log)
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("serve: --listen %s: %w", o.Listen, err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	opts.Loopback = addr.IP.IsLoopback()
	if !opts.Loopback && opts.Token == "" {
		fmt.Fprintf(log, "stem serve: WARNING: answering every host on %s with no --token-env: anyone who reaches it can ask\n", addr)
	}
	srv := New(opts)
	defer srv.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ctx, ln) }()
	stopping := srv.onStop(ctx, cancel, o.Stop, func() {
		fmt.Fprintf(log, "stem serve: stopping; the questions in flight have up to %v (--grace) to finish; a second Ctrl-C stops now\n", opts.Grace)
	}, log)
	defer stopping.end()
	url := fmt.Sprintf("http://%s/", ln.Addr())
	fmt.Fprintf(log, "stem serve: listening on %s; loading the KG and models (/readyz says when) ...\n", url)
	start := time.Now()
	closeAssets, err := load(ctx, srv)
	if err != nil {
		cancel()
		<-errc
		return err
	}
	defer closeAssets()
	fmt.Fprintf(log, "stem serve: ready in %s: %s (viewer), %sv1/ask, %smcp; Ctrl-C stops\n", time.Since(start).Round(time.Millisecond), url, url, url)
	err = <-errc
	// "stopping" is said before "stopped", whichever saw the stop first
	// (it was said after, or not at all, when ctx ended before the
	// signal's goroutine ran).
	stopping.announce()
	if err == nil {
		fmt.Fprintln(log, "stem serve: stopped; every request in flight was answered")
	}
	return err
}

// runStdio serves the MCP tools over o.In and o.Out: the first stop
// signal (or ctx's end) stops reading and lets the calls in flight be
// answered within the grace, a second cuts them off.
func runStdio(ctx context.Context, o RunOptions, opts Options, load func(ctx context.Context, srv *Server) (func() error, error), log io.Writer) error {
	srv := New(opts)
	defer srv.Close()
	// stdout is the protocol: everything else goes to log.
	closeAssets, err := load(ctx, srv)
	if err != nil {
		return err
	}
	defer closeAssets()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopping := srv.onStop(ctx, cancel, o.Stop, func() {
		fmt.Fprintf(log, "stem serve: stopping; the MCP calls in flight have up to %v (--grace) to be answered; a second Ctrl-C stops now\n", opts.Grace)
	}, log)
	defer stopping.end()
	fmt.Fprintln(log, "stem serve: MCP tools on stdin/stdout")
	err = srv.ServeStdio(ctx, o.In, o.Out)
	if ctx.Err() != nil {
		stopping.announce()
		if err == nil {
			fmt.Fprintln(log, "stem serve: stopped; every MCP call in flight was answered")
		}
	}
	return err
}

// stopper says "stopping" once, and ends the goroutine that waits for
// stop signals.
type stopper struct {
	once     sync.Once
	say      func()
	finished chan struct{}
}

func (s *stopper) announce() { s.once.Do(s.say) }
func (s *stopper) end()      { close(s.finished) }

// onStop waits for the stop signals: the first (or ctx's end) announces
// the stop and cancels; a second signal aborts the requests in flight.
// Only signals are counted: the first one also ends ctx (main's), in
// either order.
func (srv *Server) onStop(ctx context.Context, cancel context.CancelFunc, stop <-chan os.Signal, say func(), log io.Writer) *stopper {
	st := &stopper{say: say, finished: make(chan struct{})}
	go func() {
		done := ctx.Done()
		for signals := 0; ; {
			select {
			case <-stop:
				signals++
			case <-done:
				done = nil
			case <-st.finished:
				return
			}
			st.announce()
			cancel()
			if signals == 2 {
				fmt.Fprintln(log, "stem serve: stopping now; the questions in flight are cut off")
				srv.Abort()
				return
			}
		}
	}()
	return st
}
