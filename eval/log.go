package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/internal/jsonl"
)

// LogVersion is the results-log format written in LogHeader.Log.
const LogVersion = 1

// LogHeader is the first line of a results log. Config names what produced
// the results that follow (dataset, planner, ablations, encoder ...), so
// that resuming with another configuration fails instead of mixing two
// runs' results in one report.
type LogHeader struct {
	Log    int               `json:"stem_eval_log"`
	Config map[string]string `json:"config"`
	// Created is informational and is not compared on resume.
	Created string `json:"created,omitempty"`
}

// ErrLogConfig marks a results log whose header names another
// configuration than the run resuming it.
var ErrLogConfig = errors.New("results log was written by another configuration")

// ReadLog reads a results log: the header line, then one Result per line.
// A last line that is cut short or does not parse is the trace of a crash
// mid-write and is ignored; good is the length of the log up to the end of
// the last whole line, where appending may resume. A bad line elsewhere is
// an error naming name:line.
func ReadLog(r io.Reader, name string) (h LogHeader, results []Result, good int64, err error) {
	good, err = jsonl.Read(r, name, func(text []byte) error {
		if err := json.Unmarshal(text, &h); err != nil || h.Log == 0 {
			return fmt.Errorf("not a stem eval results log (no header line): %w", benchmark.ErrSyntax)
		}
		if h.Log != LogVersion {
			return fmt.Errorf("results log version %d, want %d", h.Log, LogVersion)
		}
		return nil
	}, func(text []byte) error {
		var res Result
		if err := json.Unmarshal(text, &res); err != nil || res.ID == "" {
			if err == nil {
				err = errors.New("result without id")
			}
			return fmt.Errorf("%w: %v", benchmark.ErrSyntax, err)
		}
		results = append(results, res)
		return nil
	})
	if err != nil {
		if !errors.Is(err, benchmark.ErrSyntax) && h.Log == 0 {
			// No header: whatever the file is, it is not a results log.
			err = fmt.Errorf("%w: %w", err, benchmark.ErrSyntax)
		}
		return h, nil, 0, err
	}
	return h, results, good, nil
}

// ConfigDiff lists the keys whose values differ between two
// configurations, as "key: a != b", sorted; nil when they are equal.
// A key that one side lacks and the other holds at its addedKeys value
// is no difference: the log was written before the key existed, by a
// build that behaved as that value does.
func ConfigDiff(a, b map[string]string) []string {
	var diff []string
	for _, k := range slices.Sorted(maps.Keys(a)) {
		bv, ok := b[k]
		if !ok && addedKeys[k] == a[k] && a[k] != "" {
			continue
		}
		if !ok || bv != a[k] {
			diff = append(diff, fmt.Sprintf("%s: %q != %q", k, a[k], bv))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(b)) {
		if _, ok := a[k]; !ok && !(addedKeys[k] == b[k] && b[k] != "") {
			diff = append(diff, fmt.Sprintf("%s: %q != %q", k, "", b[k]))
		}
	}
	return diff
}

// addedKeys holds the configuration keys added after results logs were
// first written, each with the value that older builds behaved as, so a
// log they wrote can still be resumed.
var addedKeys = map[string]string{
	"selection": "strategy",
}

// Log appends results to a results log as they are scored. Each result is
// one write of one line, so a crash loses at most the line being written,
// which ReadLog then ignores; the file is fsynced every SyncEvery and on
// Close. A Log is not safe for concurrent use (Run calls OnResult from one
// goroutine at a time).
type Log struct {
	f        *os.File
	path     string
	lastSync time.Time
	// SyncEvery is the longest time a written result may wait for fsync.
	SyncEvery time.Duration
}

// OpenLog opens the results log at path for config. Without resume the
// file must not exist yet or be empty, so that an earlier run's results are
// never overwritten by accident; a new header line is written. With resume
// an existing log is read back: its header must name config (else an error
// wrapping ErrLogConfig lists the differences), a torn last line is cut
// off, and the results it holds are returned for Options.Done. Resuming a
// log that does not exist starts a new one.
func OpenLog(path string, config map[string]string, resume bool) (*Log, []Result, error) {
	l, rs, err := openLog(path, config, resume)
	if err == nil {
		// Best effort: PATH.lock only names the writer in a second run's
		// refusal; Close removes it.
		_ = os.WriteFile(path+".lock", fmt.Appendf(nil, "pid %d\n", os.Getpid()), 0o644)
	}
	return l, rs, err
}

func openLog(path string, config map[string]string, resume bool) (*Log, []Result, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("open results log: %w", err)
	}
	// One writer at a time: a second run on the same log (two --resume
	// runs) would interleave and duplicate results.
	if err := lockFile(f); err != nil {
		f.Close()
		if errors.Is(err, errLocked) {
			who := "another stem run"
			if b, rerr := os.ReadFile(path + ".lock"); rerr == nil && len(b) > 0 {
				who = "another stem run (" + strings.TrimSpace(string(b)) + ")"
			}
			return nil, nil, fmt.Errorf("results log %s is being written by %s: wait for it to finish, or give another --out", path, who)
		}
		return nil, nil, fmt.Errorf("lock results log %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("open results log: %w", err)
	}
	l := &Log{f: f, path: path, lastSync: time.Now(), SyncEvery: time.Second}
	if st.Size() > 0 {
		if !resume {
			f.Close()
			return nil, nil, fmt.Errorf("results log %s already holds results: pass --resume to continue it, or remove it", path)
		}
		h, rs, good, err := ReadLog(f, path)
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		if diff := ConfigDiff(h.Config, config); diff != nil {
			f.Close()
			return nil, nil, fmt.Errorf("resume %s: %w (log != this run): %s", path, ErrLogConfig, strings.Join(diff, "; "))
		}
		if good < st.Size() {
			if err := f.Truncate(good); err != nil {
				f.Close()
				return nil, nil, fmt.Errorf("resume %s: cut the torn last line: %w", path, err)
			}
		}
		if _, err := f.Seek(good, io.SeekStart); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("resume %s: %w", path, err)
		}
		return l, rs, nil
	}
	h, err := json.Marshal(LogHeader{Log: LogVersion, Config: config, Created: time.Now().UTC().Format(time.RFC3339)})
	if err == nil {
		_, err = f.Write(append(h, '\n'))
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("write results log %s: %w", path, err)
	}
	return l, nil, nil
}

// Write appends r as one line, with fsync when the last one is older than
// SyncEvery.
func (l *Log) Write(r Result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("results log %s: %w", l.path, err)
	}
	if _, err := l.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("results log %s: %w", l.path, err)
	}
	if time.Since(l.lastSync) >= l.SyncEvery {
		l.lastSync = time.Now()
		if err := l.f.Sync(); err != nil {
			return fmt.Errorf("results log %s: %w", l.path, err)
		}
	}
	return nil
}

// errLocked is lockFile's answer when another writer holds the log.
var errLocked = errors.New("locked")

// Close fsyncs and closes the log, which releases its lock.
func (l *Log) Close() error {
	serr := l.f.Sync()
	os.Remove(l.path + ".lock")
	cerr := l.f.Close()
	if err := errors.Join(serr, cerr); err != nil {
		return fmt.Errorf("results log %s: %w", l.path, err)
	}
	return nil
}
