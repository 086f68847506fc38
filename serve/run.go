package serve

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
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
	if o.Stdio {
		srv := New(opts)
		defer srv.Close()
		// stdout is the protocol: everything else goes to log.
		closeAssets, err := load(ctx, srv)
		if err != nil {
			return err
		}
		defer closeAssets()
		fmt.Fprintln(log, "stem serve: MCP tools on stdin/stdout")
		return srv.ServeStdio(ctx, o.In, o.Out)
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
	served := make(chan struct{})
	defer close(served)
	go func() {
		for n := 1; ; n++ {
			select {
			case <-o.Stop:
			case <-served:
				return
			}
			if n == 1 {
				fmt.Fprintf(log, "stem serve: stopping; the questions in flight have up to %v (--grace) to finish; a second Ctrl-C stops now\n", opts.Grace)
				cancel()
				continue
			}
			fmt.Fprintln(log, "stem serve: stopping now; the questions in flight are cut off")
			srv.Abort()
			return
		}
	}()
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
	if err == nil {
		fmt.Fprintln(log, "stem serve: stopped; every request in flight was answered")
	}
	return err
}
