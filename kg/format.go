package kg

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Format names a KG file format.
type Format string

// The formats Load understands.
const (
	FormatAuto     Format = "auto"     // detect from content and extension
	FormatTSV      Format = "tsv"      // head<TAB>relation<TAB>tail
	FormatPipe     Format = "pipe"     // head|relation|tail
	FormatNTriples Format = "nt"       // N-Triples
	FormatRoG      Format = "rog"      // RoG JSONL, one KG per row: read with ReadRoG
	FormatSnapshot Format = "snapshot" // binary snapshot written by WriteSnapshot
)

var formats = []Format{FormatAuto, FormatTSV, FormatPipe, FormatNTriples, FormatFreebase, FormatRoG, FormatSnapshot}

// datasetKGs are the dataset format words (stem eval --format) whose KG
// file has a format of its own: --format metaqa names the KG of MetaQA
// (kb.txt, head|relation|tail) wherever a KG format is asked for, so that
// one word means one thing on every command.
var datasetKGs = map[string]Format{"pq": FormatTSV, "metaqa": FormatPipe}

// datasetWords are the other dataset format words: their questions bring
// their own graphs, so they name no KG file format.
var datasetWords = []string{"webqsp-mini", "webqsp-paths", "items"}

// ParseFormat turns a flag value into a Format. Case is ignored and "" means
// FormatAuto. The dataset words pq and metaqa name their KG files' formats
// (tsv and pipe); rog is RoG's JSONL either way.
func ParseFormat(s string) (Format, error) {
	t := Format(strings.ToLower(strings.TrimSpace(s)))
	if t == "" {
		return FormatAuto, nil
	}
	for _, f := range formats {
		if t == f {
			return f, nil
		}
	}
	if f, ok := datasetKGs[string(t)]; ok {
		return f, nil
	}
	return "", unknownFormat(s)
}

// IsFormatName says whether s names a KG file format, for a command whose
// --format names something else and explains a KG word given to it.
func IsFormatName(s string) bool {
	t := strings.ToLower(strings.TrimSpace(s))
	return t != "" && t != string(FormatRoG) && slices.Contains(formats, Format(t))
}

func unknownFormat(s string) error {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = string(f)
	}
	if slices.Contains(datasetWords, strings.ToLower(strings.TrimSpace(s))) {
		return fmt.Errorf("%w %q: that is a dataset format (stem eval --format), whose questions bring their own graphs; a KG file's format is one of %s (or pq, metaqa: their KG files' formats)",
			ErrUnknownFormat, s, strings.Join(names, ", "))
	}
	return fmt.Errorf("%w %q (valid: %s; or the dataset words pq and metaqa, for their KG files' formats)", ErrUnknownFormat, s, strings.Join(names, ", "))
}

// FormatOfName returns the KG format a file name's extension says: .nt
// and .ntriples N-Triples, .tsv TSV, .kg and .stemkg a snapshot, .jsonl
// RoG rows. ok is false for a name that says none (.txt holds TSV and
// pipe files alike).
func FormatOfName(path string) (f Format, ok bool) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".nt", ".ntriples":
		return FormatNTriples, true
	case ".tsv":
		return FormatTSV, true
	case ".kg", ".stemkg":
		return FormatSnapshot, true
	case ".jsonl":
		return FormatRoG, true
	}
	return "", false
}

// formatNames are the formats' names in messages.
var formatNames = map[Format]string{FormatTSV: "TSV", FormatPipe: "pipe-separated", FormatNTriples: "N-Triples", FormatRoG: "RoG JSONL", FormatSnapshot: "a binary snapshot", FormatFreebase: "a Freebase dump"}

// CheckOutputName refuses an output KG file whose name says another
// format than the one the command writes: `stem kg synth --out kg.nt`
// once wrote TSV that `stem kg build kg.nt` then read as N-Triples and
// failed on line 1.
func CheckOutputName(flag, path string, writes Format) error {
	said, ok := FormatOfName(path)
	if !ok || said == writes {
		return nil
	}
	return fmt.Errorf("%s %s: the name says %s, but this command writes %s: name the file for what it holds", flag, path, formatNames[said], formatNames[writes])
}

// Load reads the KG at path. With FormatAuto it detects the format: a
// snapshot by its magic bytes, N-Triples by a .nt extension or a first line
// that starts with '<' or "_:" and ends with '.', and otherwise TSV or pipe
// by whether the first data line holds a tab or a '|'. RoG files (.jsonl)
// hold one KG per row and are refused: use ReadRoG. ctx is checked while
// text is parsed.
func Load(ctx context.Context, path string, f Format) (*Graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	if f == FormatSnapshot {
		return ReadSnapshot(path)
	}
	if f == FormatRoG {
		return nil, fmt.Errorf("load %s: a RoG file holds one KG per row: read it with kg.ReadRoG", path)
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load KG: %w", err)
	}
	defer file.Close()
	br := bufio.NewReaderSize(file, 256<<10)
	r, compressed, err := decompress(br, path)
	if err != nil {
		return nil, err
	}
	if compressed {
		// Parse the decompressed stream; a snapshot inside cannot be
		// mapped, so it is read.
		return LoadReader(ctx, r, path, f)
	}
	if f == FormatAuto {
		if f, err = detect(br, path); err != nil {
			return nil, err
		}
		if f == FormatSnapshot {
			file.Close()
			return ReadSnapshot(path)
		}
	}
	return parse(ctx, br, path, f)
}

// parse reads a text format from br.
func parse(ctx context.Context, br *bufio.Reader, name string, f Format) (*Graph, error) {
	switch f {
	case FormatTSV:
		return readDelimited(ctx, br, name, '\t')
	case FormatPipe:
		return readDelimited(ctx, br, name, '|')
	case FormatNTriples:
		return readNTriples(ctx, br, name)
	case FormatFreebase:
		g, _, err := readFreebase(ctx, br, name)
		return g, err
	}
	return nil, fmt.Errorf("load %s: %w", name, unknownFormat(string(f)))
}

// LoadReader is Load for an already open input, such as a file wrapped to
// report progress: it streams r (text formats are parsed line by line, so
// memory grows with the distinct names and the triple columns, not with
// the input) and labels errors with name. With FormatAuto it detects the
// format as Load does, from the content and name's extension.
func LoadReader(ctx context.Context, r io.Reader, name string, f Format) (*Graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load %s: %w", name, err)
	}
	br := bufio.NewReaderSize(r, 256<<10)
	dr, compressed, err := decompress(br, name)
	if err != nil {
		return nil, err
	}
	if compressed {
		br = bufio.NewReaderSize(dr, 256<<10)
	}
	if f == FormatAuto {
		var err error
		if f, err = detect(br, name); err != nil {
			return nil, err
		}
	}
	switch f {
	case FormatSnapshot:
		data, err := io.ReadAll(br)
		if err != nil {
			return nil, fmt.Errorf("read snapshot %s: %w", name, err)
		}
		return DecodeSnapshot(data, name)
	case FormatRoG:
		return nil, fmt.Errorf("load %s: a RoG file holds one KG per row: read it with kg.ReadRoG", name)
	}
	return parse(ctx, br, name, f)
}

// detect peeks at the start of a file to choose its format. A Freebase
// dump (tab-separated N-Triples whose subject is a machine id under ns:)
// is FormatFreebase even when named .nt.
func detect(br *bufio.Reader, path string) (Format, error) {
	head, err := br.Peek(64 << 10)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return "", fmt.Errorf("load %s: %w", path, err)
	}
	if bytes.HasPrefix(head, []byte(snapshotMagic)) {
		return FormatSnapshot, nil
	}
	switch strings.ToLower(filepath.Ext(innerName(path))) {
	case ".nt", ".ntriples":
		if f, err := detectLines(head, path); err == nil && f == FormatFreebase {
			return f, nil
		}
		return FormatNTriples, nil
	case ".jsonl":
		return "", fmt.Errorf("load %s: looks like RoG JSONL, which holds one KG per row: read it with kg.ReadRoG", path)
	}
	return detectLines(head, path)
}

// detectLines chooses a text format from the first data line of head.
func detectLines(head []byte, path string) (Format, error) {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	for len(head) > 0 {
		line := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		line = bytes.TrimRight(line, "\r")
		trimmed := bytes.TrimSpace(line)
		switch {
		case len(trimmed) == 0, bytes.HasPrefix(trimmed, []byte("@prefix")), bytes.HasPrefix(trimmed, []byte("@base")):
			continue
		case looksNTriples(trimmed) && looksFreebase(trimmed):
			return FormatFreebase, nil
		case bytes.IndexByte(line, '\t') >= 0 && !looksNTriples(trimmed):
			return FormatTSV, nil
		case looksNTriples(trimmed):
			return FormatNTriples, nil
		case trimmed[0] == '#' && bytes.IndexByte(line, '|') < 0:
			continue // an N-Triples style comment
		case bytes.IndexByte(line, '|') >= 0:
			return FormatPipe, nil
		case trimmed[0] == '{':
			return "", fmt.Errorf("load %s: looks like JSON (RoG rows?): read RoG files with kg.ReadRoG", path)
		}
		return "", fmt.Errorf("load %s: %w: cannot detect the format from the first line %q (no tab or '|'); pass the format explicitly", path, ErrUnknownFormat, clip(line, 80))
	}
	return "", fmt.Errorf("%s: %w", path, ErrEmpty)
}

// looksNTriples reports whether a trimmed line has the shape of a triple:
// it starts with an IRI or blank node and ends with '.'.
func looksNTriples(line []byte) bool {
	return (line[0] == '<' || bytes.HasPrefix(line, []byte("_:"))) && line[len(line)-1] == '.'
}

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// UnmarshalText reads a format name as ParseFormat does, so a settings
// field of type Format checks its own value.
func (f *Format) UnmarshalText(b []byte) error {
	v, err := ParseFormat(string(b))
	if err != nil {
		return err
	}
	*f = v
	return nil
}
