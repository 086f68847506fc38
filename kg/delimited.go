package kg

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
)

// MaxLineBytes bounds one input line. RoG rows hold a whole subgraph on one
// line, so the bound is generous; it exists so that a binary file fed to a
// text loader fails cleanly instead of exhausting memory.
const MaxLineBytes = 1 << 30

// ctxCheckEvery is how many lines a loader reads between context checks.
const ctxCheckEvery = 1 << 14

// lineReader yields lines without their "\n" or "\r\n", counting them. The
// returned slice is valid until the next call.
type lineReader struct {
	r    *bufio.Reader
	long []byte // accumulates lines longer than the bufio buffer
	line int
	name string
}

func newLineReader(r io.Reader, name string) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 256<<10), name: name}
}

// nextCtx is next for the loaders' loops: it also checks ctx every
// ctxCheckEvery lines, so a cancelled load of a large file stops early.
func (lr *lineReader) nextCtx(ctx context.Context) ([]byte, error) {
	line, err := lr.next()
	if err == nil && lr.line%ctxCheckEvery == 0 {
		if cerr := ctx.Err(); cerr != nil {
			return nil, fmt.Errorf("%s:%d: %w", lr.name, lr.line, cerr)
		}
	}
	return line, err
}

// each calls fn with every line, checking ctx now and then, until the
// input ends (nil) or fn or the reader fails.
func (lr *lineReader) each(ctx context.Context, fn func(line []byte) error) error {
	for {
		line, err := lr.nextCtx(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(line); err != nil {
			return err
		}
	}
}

// next returns the next line, or io.EOF after the last one.
func (lr *lineReader) next() ([]byte, error) {
	lr.long = lr.long[:0]
	for {
		s, err := lr.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if len(lr.long)+len(s) > MaxLineBytes {
				return nil, parseErr(lr.name, lr.line+1, ErrLineTooLong, "line longer than %d bytes", MaxLineBytes)
			}
			lr.long = append(lr.long, s...)
			continue
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s:%d: read: %w", lr.name, lr.line+1, err)
		}
		if len(lr.long) > 0 {
			lr.long = append(lr.long, s...)
			s = lr.long
		}
		if err == io.EOF && len(s) == 0 {
			return nil, io.EOF
		}
		lr.line++
		if lr.line == 1 {
			s = bytes.TrimPrefix(s, []byte("\xef\xbb\xbf")) // UTF-8 byte-order mark
		}
		s = bytes.TrimSuffix(s, []byte{'\n'})
		s = bytes.TrimSuffix(s, []byte{'\r'})
		return s, nil
	}
}

// isBlank reports whether a line holds only spaces and tabs.
func isBlank(s []byte) bool {
	for _, c := range s {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// ReadTSV reads head<TAB>relation<TAB>tail lines (the PathQuestion KB
// format). name labels error messages, usually the file name.
func ReadTSV(r io.Reader, name string) (*Graph, error) {
	return readDelimited(context.Background(), r, name, '\t')
}

// ReadPipe reads head|relation|tail lines (the MetaQA kb.txt format).
func ReadPipe(r io.Reader, name string) (*Graph, error) {
	return readDelimited(context.Background(), r, name, '|')
}

// readDelimited reads three sep-separated columns per line into a graph
// (see scanDelimited).
func readDelimited(ctx context.Context, r io.Reader, name string, sep byte) (*Graph, error) {
	return buildFrom(name, func(emit func(h, rel, t []byte) error) error { return scanDelimited(ctx, r, name, sep, emit) })
}

// buildFrom builds the graph of the triples scan emits; name labels
// errors.
func buildFrom(name string, scan func(emit func(h, rel, t []byte) error) error) (*Graph, error) {
	b := NewBuilder()
	err := scan(func(h, rel, t []byte) error {
		b.addBytes(h, rel, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	g, err := b.Build()
	if err != nil {
		return nil, wrapBuildErr(name, err)
	}
	return g, nil
}

// scanDelimited streams three sep-separated columns per line to emit, in
// input order; the slices are valid only during the call. Pipe fields are
// kept byte for byte (MetaQA names may hold any spaces); TSV fields lose
// the spaces around them ("A \tr\t B" is A, r, B: padding around a tab is
// layout, not a name), spaces inside stay. Lines that are empty or only
// spaces and tabs are skipped.
func scanDelimited(ctx context.Context, r io.Reader, name string, sep byte, emit func(h, rel, t []byte) error) error {
	lr := newLineReader(r, name)
	return lr.each(ctx, func(line []byte) error {
		if len(line) == 0 || (sep != '\t' && isBlank(line)) || (sep == '\t' && isBlankSpaces(line)) {
			return nil
		}
		i := bytes.IndexByte(line, sep)
		j := -1
		if i >= 0 {
			j = bytes.IndexByte(line[i+1:], sep)
		}
		if i < 0 || j < 0 || bytes.IndexByte(line[i+1+j+1:], sep) >= 0 {
			return parseErr(name, lr.line, ErrColumns, "wrong number of columns (got %d columns, want 3, separated by %s)",
				bytes.Count(line, []byte{sep})+1, sepName(sep))
		}
		j += i + 1
		head, rel, tail := line[:i], line[i+1:j], line[j+1:]
		if sep == '\t' {
			head, rel, tail = bytes.Trim(head, " "), bytes.Trim(rel, " "), bytes.Trim(tail, " ")
		}
		if err := checkFields(name, lr.line, head, rel, tail); err != nil {
			return err
		}
		return emit(head, rel, tail)
	})
}

// isBlankSpaces reports whether a line holds only spaces; in TSV a tab is a
// separator, so "\t\t" is three empty fields, not a blank line.
func isBlankSpaces(s []byte) bool {
	for _, c := range s {
		if c != ' ' {
			return false
		}
	}
	return true
}

func sepName(sep byte) string {
	if sep == '\t' {
		return "tabs"
	}
	return fmt.Sprintf("'%c'", sep)
}

func checkFields(name string, line int, head, rel, tail []byte) error {
	switch {
	case len(head) == 0:
		return parseErr(name, line, ErrEmptyField, "empty head")
	case len(rel) == 0:
		return parseErr(name, line, ErrEmptyField, "empty relation")
	case len(tail) == 0:
		return parseErr(name, line, ErrEmptyField, "empty tail")
	}
	return nil
}

// wrapBuildErr names the input in a Build failure.
func wrapBuildErr(name string, err error) error {
	return fmt.Errorf("%s: %w", name, err)
}
