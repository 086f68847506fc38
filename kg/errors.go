package kg

import (
	"errors"
	"fmt"
)

// Sentinel errors. Loaders wrap them (directly or inside a *ParseError) so
// callers can branch with errors.Is while users still read the file and line.
var (
	// ErrEmpty means the input held no triple at all.
	ErrEmpty = errors.New("knowledge graph has no triples")
	// ErrColumns means a line did not have exactly three columns.
	ErrColumns = errors.New("wrong number of columns")
	// ErrEmptyField means a head, relation or tail was the empty string.
	ErrEmptyField = errors.New("empty field")
	// ErrSyntax means a line is not valid N-Triples or JSON.
	ErrSyntax = errors.New("syntax error")
	// ErrLineTooLong means a line exceeded MaxLineBytes.
	ErrLineTooLong = errors.New("line too long")
	// ErrTooLarge means the graph has more entities, relations or triples
	// than an int32 id can address.
	ErrTooLarge = errors.New("knowledge graph too large for int32 ids")
	// ErrUnknownFormat means a format name or a file's content was not
	// recognised.
	ErrUnknownFormat = errors.New("unknown KG format")
	// ErrCorrupt means a snapshot failed a structural or checksum check.
	ErrCorrupt = errors.New("corrupt KG snapshot")
	// ErrNewerVersion means a snapshot was written by a newer stem whose
	// layout this build cannot read.
	ErrNewerVersion = errors.New("KG snapshot from a newer version")
	// ErrOldVersion means a snapshot was written in an older layout that
	// this build no longer reads; rebuilding it with `stem kg build` fixes it.
	ErrOldVersion = errors.New("KG snapshot from an older version")
)

// ParseError locates a bad input line. Its message reads
// "name:LINE: what is wrong", the form editors and CI logs link to.
type ParseError struct {
	Name string // file name or other label given to the reader
	Line int    // 1-based line (for RoG, the JSONL row's line)
	Msg  string // what is wrong, e.g. "wrong number of columns (got 2 columns, want 3)"
	Err  error  // sentinel such as ErrColumns, for errors.Is
}

// Error formats the location and the problem.
func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.Name, e.Line, e.Msg) }

// Unwrap exposes the sentinel.
func (e *ParseError) Unwrap() error { return e.Err }

func parseErr(name string, line int, sentinel error, format string, args ...any) *ParseError {
	return &ParseError{Name: name, Line: line, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}
