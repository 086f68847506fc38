package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/internal/stembin"
)

// TestShownCommandsExist holds the blocks that are shown and not run
// (norun: a whole benchmark, a long training, a server) to the program
// too: each stem command in them must name a command that exists, and
// each --flag it passes must be one that command's --help lists. A flag
// renamed or dropped then fails CI even where its example takes too long
// to run.
func TestShownCommandsExist(t *testing.T) {
	root := stembin.Root(t)
	bin := stembin.Build(t)
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{filepath.Join(root, "README.md")}, pages...)
	helps := map[string]string{}
	checked := 0
	for _, page := range pages {
		rel, _ := filepath.Rel(root, page)
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range parseBlocks(rel, string(text)) {
			if b.run {
				continue
			}
			for _, c := range b.commands {
				words, flags, ok := stemCommand(c.text)
				if !ok {
					continue
				}
				path, help := helpOf(t, bin, words, helps)
				if path == "" {
					t.Errorf("%s:%d: %q names no stem command", c.file, c.line, strings.Join(words, " "))
					continue
				}
				for _, f := range flags {
					if !flagListed(help, f) {
						t.Errorf("%s:%d: stem %s has no flag %s (not in its --help)", c.file, c.line, path, f)
					}
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no stem command found in the pages' norun blocks: the parser is broken")
	}
	t.Logf("%d shown commands checked against --help", checked)
}

// stemCommand splits a shown command that runs stem into its leading
// words (the command path and, perhaps, positional arguments) and the
// --flags it passes; ok is false for a command that is not stem's.
func stemCommand(text string) (words, flags []string, ok bool) {
	var fields []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(strings.TrimSpace(line), `\`)
		if i := strings.Index(line, " # "); i >= 0 {
			line = line[:i]
		}
		fields = append(fields, strings.Fields(line)...)
	}
	if len(fields) == 0 || fields[0] != "stem" {
		return nil, nil, false
	}
	lead := true
	for _, f := range fields[1:] {
		if strings.HasPrefix(f, "-") || strings.ContainsAny(f, `$"'=/.`) {
			lead = false
		}
		if lead {
			words = append(words, f)
		}
		if name, ok := strings.CutPrefix(f, "--"); ok && name != "" {
			name, _, _ = strings.Cut(name, "=")
			flags = append(flags, "--"+name)
		}
	}
	return words, flags, true
}

// helpOf returns the longest prefix of words that is a stem command, and
// its --help text ("" when no prefix is one); helps caches the texts.
func helpOf(t *testing.T, bin string, words []string, helps map[string]string) (string, string) {
	t.Helper()
	for n := len(words); n >= 1; n-- {
		path := strings.Join(words[:n], " ")
		if h, ok := helps[path]; ok {
			if h == "" {
				continue
			}
			return path, h
		}
		out, err := exec.Command(bin, append(words[:n:n], "--help")...).CombinedOutput()
		h := string(out)
		// A word that is no subcommand is taken as an argument of its
		// parent, whose help then names the parent, not the word.
		if err != nil || !strings.Contains(h, "stem "+path) {
			h = ""
		}
		helps[path] = h
		if h != "" {
			return path, h
		}
	}
	return "", ""
}

// flagListed reports whether help lists flag (as "--flag" followed by no
// more of a flag's name).
func flagListed(help, flag string) bool {
	return regexp.MustCompile(regexp.QuoteMeta(flag) + `([^a-zA-Z0-9-]|$)`).MatchString(help)
}
