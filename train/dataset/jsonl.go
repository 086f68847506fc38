package dataset

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/stem-kgqa/stem/internal/jsonl"
)

// FormatVersion is the version written in a data file's header line.
const FormatVersion = 1

// Header is the first line of a data file. Kind says which command wrote it
// ("chains", "synth", "assertions"); Config holds the options that shape
// the items, so resuming with other options fails instead of mixing two
// runs in one file.
type Header struct {
	Version int               `json:"stem_data"`
	Kind    string            `json:"kind"`
	Config  map[string]string `json:"config,omitempty"`
}

// ErrConfig marks a data file written with other options than the run
// resuming it.
var ErrConfig = errors.New("data file was written with other options")

// Read reads a data file: the header, then one Item per line. A last line
// cut short (a crash mid-write) is ignored and good is the length of the
// file up to the end of the last whole item, where a resumed run appends.
// A malformed line elsewhere is an error naming name:line.
func Read(r io.Reader, name string) (h Header, items []Item, good int64, err error) {
	good, err = jsonl.Read(r, name, func(text []byte) error {
		if err := json.Unmarshal(text, &h); err != nil {
			return err
		}
		if h.Version == 0 {
			return fmt.Errorf("not a stem data file (no \"stem_data\" header)")
		}
		if h.Version > FormatVersion {
			return fmt.Errorf("data format version %d is newer than this stem reads (%d)", h.Version, FormatVersion)
		}
		return nil
	}, func(text []byte) error {
		var it Item
		if err := json.Unmarshal(text, &it); err != nil {
			return err
		}
		if err := it.Check(); err != nil {
			return err
		}
		items = append(items, it)
		return nil
	})
	if err != nil {
		return h, nil, 0, err
	}
	return h, items, good, nil
}

// ReadFile reads the data file at path; see Read.
func ReadFile(path string) (Header, []Item, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, nil, err
	}
	defer f.Close()
	h, items, _, err := Read(f, path)
	return h, items, err
}

// Writer appends items to a data file, one whole line per Write, so an
// interrupted run loses at most the item being written. It is safe for
// concurrent use.
type Writer struct {
	mu   sync.Mutex
	f    *os.File
	path string
	done map[string]bool
	n    int
}

// Create opens path for writing items of the given kind and config. With
// resume, an existing file is read, its torn last line cut off, and its
// items returned so the caller can skip them (Writer.Done); its header must
// match kind and config (ErrConfig otherwise). Without resume, an existing
// non-empty file is an error rather than silently overwritten.
func Create(path, kind string, config map[string]string, resume bool) (*Writer, []Item, error) {
	w := &Writer{path: path, done: map[string]bool{}}
	want := Header{Version: FormatVersion, Kind: kind, Config: config}
	if st, err := os.Stat(path); err == nil && st.Size() > 0 {
		if !resume {
			return nil, nil, fmt.Errorf("%s already exists: pass --resume to continue it, or remove it", path)
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return nil, nil, err
		}
		h, items, good, err := Read(f, path)
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		if h.Kind != kind || !maps.Equal(h.Config, config) {
			f.Close()
			return nil, nil, fmt.Errorf("%s: %w: file has %s %s, this run %s %s", path, ErrConfig, h.Kind, formatConfig(h.Config), kind, formatConfig(config))
		}
		if err := f.Truncate(good); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("cut the torn tail of %s: %w", path, err)
		}
		if _, err := f.Seek(good, io.SeekStart); err != nil {
			f.Close()
			return nil, nil, err
		}
		for _, it := range items {
			w.done[it.ID] = true
		}
		w.f, w.n = f, len(items)
		return w, items, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, nil, err
	}
	b, err := json.Marshal(want)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("write %s: %w", path, err)
	}
	w.f = f
	return w, nil, nil
}

// Done reports whether an item with this ID is already in the file.
func (w *Writer) Done(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.done[id]
}

// Len returns the number of items in the file, resumed ones included.
func (w *Writer) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// Write appends one item. An item whose ID is already in the file is
// refused, so a resumed run cannot write it twice.
func (w *Writer) Write(it *Item) error {
	if err := it.Check(); err != nil {
		return err
	}
	b, err := json.Marshal(it)
	if err != nil {
		return fmt.Errorf("encode item %s: %w", it.ID, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done[it.ID] {
		return fmt.Errorf("%s: item %s is already written", w.path, it.ID)
	}
	if _, err := w.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	w.done[it.ID] = true
	w.n++
	return nil
}

// Close flushes the file to disk and closes it.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	return err
}

func formatConfig(c map[string]string) string {
	keys := slices.Sorted(maps.Keys(c))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + c[k]
	}
	return "{" + strings.Join(parts, " ") + "}"
}
