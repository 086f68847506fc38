package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"
)

// configFlag names a JSON file of flag values, so a whole pipeline
// configuration (planner, encoder, tracing parameters, LLM server) can be
// kept in one file and shared. Keys are flag names; flags given on the
// command line win over the file.
var configFlag = &cli.StringFlag{
	Name:  "config",
	Usage: `JSON file of flag values, e.g. {"planner": "pattern", "planner-model": "pq.stempat", "beam": 4}; command-line flags win`,
}

// applyConfig sets, from the --config file, every flag the command line did
// not set. Unknown keys are an error naming the key, so a typo in a config
// file is not silently ignored.
func applyConfig(c *cli.Context) error {
	path := c.String("config")
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	var values map[string]any
	if err := json.Unmarshal(data, &values); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	known := map[string]bool{}
	for _, f := range c.Command.Flags {
		for _, n := range f.Names() {
			known[n] = true
		}
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !known[k] || k == "config" {
			return fmt.Errorf("config %s: %q is not a flag of stem %s", path, k, c.Command.Name)
		}
		if c.IsSet(k) {
			continue
		}
		var s string
		switch v := values[k].(type) {
		case string:
			s = v
		case bool, float64:
			s = fmt.Sprint(v)
		case []any:
			parts := make([]string, len(v))
			for i, x := range v {
				parts[i] = fmt.Sprint(x)
			}
			s = strings.Join(parts, ",")
		default:
			return fmt.Errorf("config %s: %q has a value of an unsupported type", path, k)
		}
		if err := c.Set(k, s); err != nil {
			return fmt.Errorf("config %s: %q: %w", path, k, err)
		}
	}
	return nil
}
