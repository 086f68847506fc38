package benchmark

import (
	"bufio"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"strings"
)

// Half names one side of the fixed split by question id.
type Half int

const (
	// Train is the half whose ids hash to an even number.
	Train Half = iota
	// Test is the half whose ids hash to an odd number.
	Test
)

// String returns "train" or "test".
func (h Half) String() string {
	if h == Test {
		return "test"
	}
	return "train"
}

// HalfOf is the fixed split of a dataset by question id: the FNV-1a
// 64-bit hash of the id's bytes, even for Train and odd for Test. It
// depends on the id alone, so a question stays on its side whatever file
// order, subset or machine, and needs no seed.
func HalfOf(id string) Half {
	h := fnv.New64a()
	h.Write([]byte(id))
	return Half(h.Sum64() & 1)
}

// SplitByID divides qs into the Train and Test halves of HalfOf, each in
// its original order.
func SplitByID(qs []Question) (train, test []Question) {
	for _, q := range qs {
		if HalfOf(q.ID) == Test {
			test = append(test, q)
		} else {
			train = append(train, q)
		}
	}
	return train, test
}

// ReadIDs reads a question id file: one id per line, blank lines and
// surrounding spaces ignored. A missing file or one without ids is an
// error naming it.
func ReadIDs(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read ids: %w", err)
	}
	defer f.Close()
	ids := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if id := strings.TrimSpace(sc.Text()); id != "" {
			ids[id] = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read ids %s: %w", path, err)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("read ids %s: %w", path, ErrNoIDs)
	}
	return ids, nil
}

// ErrNoIDs marks an id file that lists no id, or whose ids match no
// question.
var ErrNoIDs = errors.New("no question ids")

// KeepIDs returns the questions of qs whose id is in ids, in their
// original order. None kept is an error wrapping ErrNoIDs that names
// from, the id file.
func KeepIDs(qs []Question, ids map[string]bool, from string) ([]Question, error) {
	var out []Question
	for _, q := range qs {
		if ids[q.ID] {
			out = append(out, q)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("ids %s: %w: none of its %d ids names one of the %d questions", from, ErrNoIDs, len(ids), len(qs))
	}
	return out, nil
}

// WriteIDs writes the ids of qs, one per line, in the format ReadIDs
// reads.
func WriteIDs(w io.Writer, qs []Question) error {
	bw := bufio.NewWriter(w)
	for _, q := range qs {
		if _, err := fmt.Fprintln(bw, q.ID); err != nil {
			return fmt.Errorf("write ids: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write ids: %w", err)
	}
	return nil
}
