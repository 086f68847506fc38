package benchmark

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stem-kgqa/stem/schema"
)

// ErrSyntax marks a dataset line that does not have its format's shape;
// loaders wrap it with file:line.
var ErrSyntax = errors.New("malformed dataset line")

// ParsePathQuestion parses one PathQuestion line,
// "question<TAB>name(gold1/gold2/.../)<TAB>subj#rel1#ent1#rel2#...#answer",
// optionally followed by "#<end>#answer" (PQ) and surrounded by spaces
// (PQL). The name before the brackets is the path's last entity and the
// bracketed list is the whole gold answer set. Names may hold brackets
// themselves (PQL's "PG_(USA)(PG_(USA)/)"), so the gold list is found by
// stripping the path's last entity as a prefix, or failing that as the last
// balanced "(...)" group. The returned Question has no ID.
func ParsePathQuestion(line string) (Question, error) {
	line = strings.TrimRight(line, "\r\n")
	cols := strings.Split(line, "\t")
	if len(cols) != 3 {
		return Question{}, fmt.Errorf("%w: got %d tab-separated columns, want 3", ErrSyntax, len(cols))
	}
	text := strings.TrimSpace(cols[0])
	ansField := strings.TrimSpace(cols[1])
	pathField := strings.TrimSpace(cols[2])
	if text == "" {
		return Question{}, fmt.Errorf("%w: empty question", ErrSyntax)
	}
	parts := strings.Split(pathField, "#")
	for i, p := range parts {
		if p == "<end>" {
			parts = parts[:i]
			break
		}
	}
	if len(parts) < 3 || len(parts)%2 == 0 {
		return Question{}, fmt.Errorf("%w: path %q is not subject#relation#entity[#relation#entity...]", ErrSyntax, clip(pathField))
	}
	for _, p := range parts {
		if strings.TrimSpace(p) == "" {
			return Question{}, fmt.Errorf("%w: path %q has an empty element", ErrSyntax, clip(pathField))
		}
	}
	gp := schema.GoldPath{Start: parts[0]}
	for i := 1; i < len(parts); i += 2 {
		gp.Steps = append(gp.Steps, schema.Step{Rel: parts[i], Dir: schema.Forward})
		gp.Entities = append(gp.Entities, parts[i+1])
	}
	last := parts[len(parts)-1]
	inner, ok := goldGroup(ansField, last)
	if !ok {
		return Question{}, fmt.Errorf("%w: answer field %q is not name(gold1/gold2/.../)", ErrSyntax, clip(ansField))
	}
	answers := splitTrimmed(inner, "/")
	if len(answers) == 0 {
		return Question{}, fmt.Errorf("%w: answer field %q lists no gold answer", ErrSyntax, clip(ansField))
	}
	return Question{
		Text:     text,
		Answers:  answers,
		Entities: []string{gp.Start},
		Gold:     []schema.GoldPath{gp},
		Hops:     len(gp.Steps),
	}, nil
}

// goldGroup returns the inside of the trailing "(...)" group of the answer
// field.
func goldGroup(field, name string) (string, bool) {
	if !strings.HasSuffix(field, ")") {
		return "", false
	}
	if rest, ok := strings.CutPrefix(field, name+"("); ok {
		return rest[:len(rest)-1], true
	}
	depth := 0
	for i := len(field) - 1; i >= 0; i-- {
		switch field[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return field[i+1 : len(field)-1], true
			}
		}
	}
	return "", false
}

func clip(s string) string {
	const n = 80
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// ReadPathQuestion reads PathQuestion lines from r; name labels errors
// (name:LINE, as given) and IDs (its base name:LINE, so a run resumed from
// another folder matches). Blank lines are skipped.
func ReadPathQuestion(ctx context.Context, r io.Reader, name string) ([]Question, error) {
	var out []Question
	err := eachLine(ctx, r, name, func(n int, line string) error {
		q, err := ParsePathQuestion(line)
		if err != nil {
			return err
		}
		q.ID = filepath.Base(name) + ":" + strconv.Itoa(n)
		out = append(out, q)
		return nil
	})
	return out, err
}

// LoadPathQuestion reads a PathQuestion file (PQ-2H.txt, splits/*.txt, the
// demo's questions.tsv).
func LoadPathQuestion(ctx context.Context, path string) ([]Question, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load PathQuestion: %w", err)
	}
	defer f.Close()
	return ReadPathQuestion(ctx, f, path)
}

// eachLine calls fn with each non-blank line (without its line ending) and
// its 1-based number, wrapping fn's error as name:LINE.
func eachLine(ctx context.Context, r io.Reader, name string, fn func(n int, line string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	n := 0
	for sc.Scan() {
		n++
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		line := strings.TrimRight(sc.Text(), "\r")
		if n == 1 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		if err := fn(n, line); err != nil {
			return fmt.Errorf("%s:%d: %w", name, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %w", name, n+1, err)
	}
	return nil
}

// splitTrimmed splits s at sep and keeps the non-empty parts, trimmed: the
// answer lists of both question formats.
func splitTrimmed(s, sep string) []string {
	var out []string
	for _, a := range strings.Split(s, sep) {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}
