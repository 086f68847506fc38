package atomicfile

import (
	"errors"
	"fmt"
	"os"
)

// ErrExists marks an output that exists already and may not be replaced.
var ErrExists = errors.New("exists")

// CheckOutput is the one rule every stem command applies to the file or
// folder it writes, before any work: an output that is one of the
// command's inputs (the same file after links are resolved) is refused
// always, so a slip of the keyboard never turns a KG or a question file
// into a model; an output that exists already is refused unless replace is
// set (the --force flag; commands that can continue a file say --resume
// instead). flag names the option in messages ("--out").
func CheckOutput(flag, out string, replace bool, inputs ...string) error {
	st, err := os.Stat(out)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", flag, out, err)
	}
	for _, in := range inputs {
		if in == "" {
			continue
		}
		if ist, err := os.Stat(in); err == nil && os.SameFile(st, ist) {
			return fmt.Errorf("%s %s is also an input (%s): refusing to overwrite it; write to another file", flag, out, in)
		}
	}
	if !replace {
		return fmt.Errorf("%s %s: %w; give --force to replace it, or another path", flag, out, ErrExists)
	}
	return nil
}
