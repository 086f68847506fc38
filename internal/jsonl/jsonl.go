// Package jsonl reads JSON Lines files. Read reads the append-only files
// stem writes for long runs (evaluation results, training data): a header
// line, then one record per line, appended as the run goes. A run killed
// mid-write leaves a torn last line; Read tells how far the file is whole,
// so the run can resume by cutting the file there and appending. Lines
// reads the files other systems write (RoG's and GNN-RAG's), which have no
// header, one line at a time.
package jsonl

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
)

// Lines calls fn with each non-blank line of r and its 1-based number,
// checking ctx before each. Lines may be up to 256 MiB long (a RoG row
// holds a whole question graph). An error from fn stops the read and is
// returned unchanged; a read error names name and the line.
func Lines(ctx context.Context, r io.Reader, name string, fn func(n int, line []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1024*1024), 256*1024*1024)
	n := 0
	for sc.Scan() {
		n++
		if err := ctx.Err(); err != nil {
			return err
		}
		line := sc.Bytes()
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		if err := fn(n, line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", name, n+1, err)
	}
	return nil
}

// Read reads r line by line. It calls header with the first line and
// record with each later non-blank line (both trimmed of white space).
// An error from header stops the read ("name:1: ..."). An error from
// record stops it too ("name:LINE: ...") unless that line is the last
// one: then, like a last line without its newline, it is taken for the
// trace of a crash mid-write and left out. good is the length of r up to
// the end of the last whole, accepted line: where appending may resume.
// An empty r is an error.
func Read(r io.Reader, name string, header, record func(text []byte) error) (good int64, err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var (
		line  int
		badAt int // line of a bad record not yet known to be the last
		bad   error
	)
	for {
		b, rerr := br.ReadBytes('\n')
		if rerr != nil && rerr != io.EOF {
			return 0, fmt.Errorf("read %s: %w", name, rerr)
		}
		if len(b) == 0 {
			break
		}
		if bad != nil {
			// The bad record was not the last line.
			return 0, fmt.Errorf("%s:%d: %w", name, badAt, bad)
		}
		line++
		whole := b[len(b)-1] == '\n'
		text := bytes.TrimSpace(b)
		if !whole {
			if line == 1 {
				return 0, fmt.Errorf("%s: no whole header line", name)
			}
			break // torn last line
		}
		switch {
		case line == 1:
			if err := header(text); err != nil {
				return 0, fmt.Errorf("%s:1: %w", name, err)
			}
		case len(text) == 0:
		default:
			if err := record(text); err != nil {
				badAt, bad = line, err
				continue
			}
		}
		good += int64(len(b))
		if rerr == io.EOF {
			break
		}
	}
	if line == 0 {
		return 0, fmt.Errorf("%s: empty file (no whole header line)", name)
	}
	return good, nil
}
