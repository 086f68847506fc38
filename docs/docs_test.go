package docs

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/internal/shareddata"
	"github.com/stem-kgqa/stem/internal/stembin"
	"github.com/stem-kgqa/stem/models/wordvec"
)

// TestExamples runs the commands of README.md and docs/*.md and compares
// what they print with what the page shows, so that an example that
// drifts from the program fails CI. What a page's fenced blocks mean:
//
//   - ```console: a line starting "$ " is a command (continued on the next
//     line while it ends in a backslash); the lines after it, up to the
//     next "$ " line, are what it prints on standard output (progress
//     and timings go to standard error, which is not compared: a reader's
//     terminal shows both), or on standard error for a command that
//     prints nothing on standard output (the trainers write their summary
//     there). A line "..." stands for any number of lines, and "..."
//     inside a line for any text there (timings, versions). Every command
//     must exit 0.
//   - ```sh: every line (continued while it ends in a backslash; blank and
//     comment lines skipped) is a command that must exit 0; what it prints
//     is not shown, so not compared.
//   - A block whose info string has the word norun (```sh norun, ```console
//     norun) is shown, not run: commands that take minutes (a whole
//     benchmark, a long training, the test suite itself), that keep
//     running (stem serve) or that need what CI lacks (a GPU, an LLM
//     server, Freebase). Its output is as measured, with the machine named
//     beside it. Its stem commands are still checked against the program:
//     TestShownCommandsExist wants each to name a command whose --help
//     lists every --flag it passes.
//   - Other blocks (json, python, text, plain ```) are not commands.
//
// A page's commands run in order in one bash, from the repository's root,
// with HOME an empty folder (so "mkdir -p" lines are tested too), GOBIN a
// folder at the head of PATH holding a freshly built stem (the README's
// go install writes there too), the go command's caches as they are (so
// nothing is rebuilt), STEM_CACHE_DIR the cache holding the word vectors
// (`stem setup`, as the README's test command runs first), and
// "../shared/data" in a command standing for the benchmark data
// (shareddata.Dir). It skips where that data is absent.
func TestExamples(t *testing.T) {
	data, ok := shareddata.Dir()
	if !ok {
		t.Skipf("shared benchmark data not found (../shared/data beside the module, or $%s): the examples read it", shareddata.EnvVar)
	}
	data, err := filepath.Abs(data)
	if err != nil {
		t.Fatal(err)
	}
	root := stembin.Root(t)
	bin := stembin.Build(t)
	env, err := exampleEnv(filepath.Dir(bin), t.TempDir(), data)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{filepath.Join(root, "README.md")}, pages...)
	for _, page := range pages {
		rel, _ := filepath.Rel(root, page)
		t.Run(rel, func(t *testing.T) {
			text, err := os.ReadFile(page)
			if err != nil {
				t.Fatal(err)
			}
			var cmds []command
			for _, b := range parseBlocks(rel, string(text)) {
				if b.run {
					cmds = append(cmds, b.commands...)
				}
			}
			if len(cmds) == 0 {
				return
			}
			for i := range cmds {
				cmds[i].text = strings.ReplaceAll(cmds[i].text, "../shared/data", data)
			}
			runPage(t, root, env, cmds)
		})
	}
}

// exampleEnv is the environment the examples run in: this process's, with
// an empty HOME, bin at the head of PATH as GOBIN, and the caches the go
// command and stem use now named explicitly, since their defaults move
// with HOME.
func exampleEnv(bin, home, data string) ([]string, error) {
	keep := map[string]string{}
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			return nil, fmt.Errorf("go env %s: %w", v, err)
		}
		keep[v] = strings.TrimSpace(string(out))
	}
	cache, err := wordvec.DefaultCacheDir()
	if err != nil {
		return nil, err
	}
	keep[wordvec.CacheEnv] = cache
	keep[shareddata.EnvVar] = data
	keep["HOME"] = home
	keep["GOBIN"] = bin
	keep["PATH"] = bin + string(os.PathListSeparator) + os.Getenv("PATH")
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := keep[k]; !ok && k != "XDG_CACHE_HOME" && k != "XDG_CONFIG_HOME" && k != "XDG_DATA_HOME" {
			env = append(env, kv)
		}
	}
	for k, v := range keep {
		env = append(env, k+"="+v)
	}
	return env, nil
}

// command is one command of a page, with the output its page shows
// (console blocks) and where it is.
type command struct {
	text string
	// want is the output shown, one line each; check says whether to
	// compare it (console blocks).
	want  []string
	check bool
	file  string
	line  int
}

// block is one fenced block of a page.
type block struct {
	lang     string
	run      bool
	line     int
	lines    []string
	commands []command
}

// parseBlocks returns the fenced blocks of a Markdown page, with the
// commands of the console and sh blocks.
func parseBlocks(file, text string) []block {
	var blocks []block
	var cur *block
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if cur == nil {
			if info, ok := strings.CutPrefix(trimmed, "```"); ok {
				words := strings.Fields(info)
				b := block{line: n, run: true}
				for i, w := range words {
					if i == 0 {
						b.lang = w
					} else if w == "norun" {
						b.run = false
					}
				}
				cur = &b
			}
			continue
		}
		if trimmed == "```" {
			switch cur.lang {
			case "console":
				cur.commands = consoleCommands(file, cur.line+1, cur.lines)
			case "sh":
				cur.commands = shCommands(file, cur.line+1, cur.lines)
			default:
				cur.run = false
			}
			blocks = append(blocks, *cur)
			cur = nil
			continue
		}
		cur.lines = append(cur.lines, line)
	}
	return blocks
}

// consoleCommands reads a console block: "$ " lines and what they print.
func consoleCommands(file string, first int, lines []string) []command {
	var cmds []command
	for i := 0; i < len(lines); i++ {
		rest, ok := strings.CutPrefix(lines[i], "$ ")
		if !ok {
			if len(cmds) > 0 {
				cmds[len(cmds)-1].want = append(cmds[len(cmds)-1].want, lines[i])
			}
			continue
		}
		c := command{text: rest, check: true, file: file, line: first + i}
		for strings.HasSuffix(c.text, `\`) && i+1 < len(lines) {
			i++
			c.text += "\n" + lines[i]
		}
		cmds = append(cmds, c)
	}
	return cmds
}

// shCommands reads a sh block: one command a line, continued by a
// trailing backslash.
func shCommands(file string, first int, lines []string) []command {
	var cmds []command
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		c := command{text: lines[i], file: file, line: first + i}
		for strings.HasSuffix(strings.TrimSpace(c.text), `\`) && i+1 < len(lines) {
			i++
			c.text += "\n" + lines[i]
		}
		cmds = append(cmds, c)
	}
	return cmds
}

// marker separates the commands' outputs in the page's one shell.
const marker = "@@stem-docs-example"

// runPage runs a page's commands in one bash and checks each one's exit
// status and output.
func runPage(t *testing.T, root string, env []string, cmds []command) {
	dir := t.TempDir()
	var script strings.Builder
	script.WriteString("cd " + strconv.Quote(root) + " || exit 99\n")
	for i, c := range cmds {
		fmt.Fprintf(&script, "printf '%%s %d start %%s\\n' %s \"$(date +%%s.%%N)\"\n", i, marker)
		fmt.Fprintf(&script, "{\n%s\n} 2>%s\n", c.text, strconv.Quote(filepath.Join(dir, fmt.Sprintf("stderr.%d", i))))
		fmt.Fprintf(&script, "printf '\\n%%s %d rc %%d %%s\\n' %s \"$?\" \"$(date +%%s.%%N)\"\n", i, marker)
	}
	path := filepath.Join(dir, "page.sh")
	if err := os.WriteFile(path, []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", path)
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	t.Logf("%d commands in %s", len(cmds), time.Since(start).Round(time.Millisecond))
	outs, rcs, secs := splitOutputs(out.String(), len(cmds))
	for i, c := range cmds {
		t.Logf("%s:%d: %.1f s", c.file, c.line, secs[i])
		stderr, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("stderr.%d", i)))
		if rcs[i] < 0 {
			t.Fatalf("%s:%d: `%s` did not finish (bash: %v); output so far:\n%s\nstandard error:\n%s", c.file, c.line, c.text, err, out.String(), stderr)
		}
		if rcs[i] != 0 {
			t.Errorf("%s:%d: `%s` exited %d:\n%s\nstandard error:\n%s", c.file, c.line, c.text, rcs[i], outs[i], stderr)
			continue
		}
		got := outs[i]
		if strings.TrimSpace(got) == "" {
			// The trainers write their summary to standard error.
			got = string(stderr)
		}
		if c.check && !matches(c.want, got) {
			t.Errorf("%s:%d: `%s` printed\n%s\nwhere the page shows\n%s\n(standard error:\n%s)", c.file, c.line, c.text, got, strings.Join(c.want, "\n"), stderr)
		}
	}
}

// splitOutputs cuts the page's output at the markers: each command's
// output, exit status (-1 for a command that never finished) and time in
// seconds.
func splitOutputs(all string, n int) ([]string, []int, []float64) {
	outs, rcs, secs := make([]string, n), make([]int, n), make([]float64, n)
	for i := range rcs {
		rcs[i] = -1
	}
	cur, start := -1, 0.0
	var b strings.Builder
	for _, line := range strings.SplitAfter(all, "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[0] == marker {
			i, err := strconv.Atoi(f[1])
			if err == nil && i >= 0 && i < n {
				switch f[2] {
				case "start":
					cur = i
					start, _ = strconv.ParseFloat(f[3], 64)
					b.Reset()
				case "rc":
					outs[i] = strings.TrimSuffix(b.String(), "\n")
					rcs[i], _ = strconv.Atoi(f[3])
					if len(f) >= 5 {
						end, _ := strconv.ParseFloat(f[4], 64)
						secs[i] = end - start
					}
					cur = -1
				}
				continue
			}
		}
		if cur >= 0 {
			b.WriteString(line)
		}
	}
	return outs, rcs, secs
}

// matches reports whether got is what want shows: trailing spaces and
// leading and trailing blank lines aside, a line "..." for any lines and
// "..." in a line for any text.
func matches(want []string, got string) bool {
	return wantPattern(want).MatchString(normalize(got))
}

// normalize drops trailing spaces of every line and blank lines at both
// ends, and ends the text with one newline.
func normalize(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// wantPattern compiles the shown output into a regular expression over
// the normalized output.
func wantPattern(want []string) *regexp.Regexp {
	var p strings.Builder
	p.WriteString(`\A`)
	var lines []string
	if n := normalize(strings.Join(want, "\n")); n != "" {
		lines = strings.Split(strings.TrimSuffix(n, "\n"), "\n")
	}
	for _, l := range lines {
		if l == "..." {
			p.WriteString(`(?:[^\n]*\n)*`)
			continue
		}
		parts := strings.Split(l, "...")
		for i, part := range parts {
			if i > 0 {
				p.WriteString(`[^\n]*`)
			}
			p.WriteString(regexp.QuoteMeta(part))
		}
		p.WriteString(`\n`)
	}
	p.WriteString(`\z`)
	return regexp.MustCompile(p.String())
}

// TestQuickStartIsCI checks that the README's second quick-start command
// is the line .ci/run runs, the one it marks as identical, and that the
// first is one TestExamples runs against its shown output.
func TestQuickStartIsCI(t *testing.T) {
	root := stembin.Root(t)
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(ci), "\n")
	var want string
	for i, l := range lines {
		if strings.Contains(l, "Keep this line identical to the README's second quick-start command") && i+1 < len(lines) {
			want = strings.TrimSpace(lines[i+1])
		}
	}
	if want == "" {
		t.Fatal(".ci/run marks no line as the README's second quick-start command")
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var quick []string
	for _, b := range parseBlocks("README.md", string(readme)) {
		if b.lang == "sh" {
			quick = b.lines
			break
		}
	}
	if len(quick) < 2 {
		t.Fatalf("README.md's first sh block (the quick start) has %d lines, want the two commands", len(quick))
	}
	got, _, _ := strings.Cut(quick[1], "#")
	if strings.TrimSpace(got) != want {
		t.Errorf("README's second quick-start command is\n\t%s\n.ci/run runs\n\t%s", strings.TrimSpace(got), want)
	}
	// The first is run, with its output shown, in a console block.
	first, _, _ := strings.Cut(quick[0], "#")
	first = strings.TrimSpace(first)
	shown := false
	for _, b := range parseBlocks("README.md", string(readme)) {
		for _, c := range b.commands {
			shown = shown || (b.run && c.check && c.text == first)
		}
	}
	if !shown {
		t.Errorf("README's first quick-start command %q is run in no console block, so its output is not checked", first)
	}
}

func TestMatches(t *testing.T) {
	for _, c := range []struct {
		want []string
		got  string
		ok   bool
	}{
		{[]string{"a", "b"}, "a\nb\n", true},
		{[]string{"a", "b"}, "a\nb", true},
		{[]string{"a", "b"}, "a\nc\n", false},
		{[]string{"a"}, "a\nb\n", false},
		{[]string{"a", "..."}, "a\nb\nc\n", true},
		{[]string{"a", "...", "c"}, "a\nc\n", true},
		{[]string{"a", "...", "c"}, "a\nb\nb\nc\n", true},
		{[]string{"a", "...", "c"}, "a\nb\nd\n", false},
		{[]string{"Q: x  (...)"}, "Q: x  (390µs)\n", true},
		{[]string{"Q: x  (...)"}, "Q: y  (390µs)\n", false},
		{[]string{"x (...) y"}, "x (1)\n y\n", false},
		{[]string{"a  "}, "a\n\n", true},
		{nil, "", true},
		{nil, "a", false},
		{[]string{"a.b"}, "axb", false},
	} {
		if got := matches(c.want, c.got); got != c.ok {
			t.Errorf("matches(%q, %q) = %v, want %v", c.want, c.got, got, c.ok)
		}
	}
}

func TestParseBlocks(t *testing.T) {
	page := "```\nplain\n```\ntext\n```console\n$ stem a \\\n    --b\nout 1\nout 2\n$ stem c\n```\n" +
		"```sh norun\nlong run\n```\n```sh\n# comment\nstem d   # note\n\nstem e \\\n  --f\n```\n```json\n{}\n```\n"
	blocks := parseBlocks("p.md", page)
	if len(blocks) != 5 {
		t.Fatalf("%d blocks, want 5", len(blocks))
	}
	if blocks[0].run || blocks[0].lang != "" {
		t.Errorf("a plain block: run %v, lang %q", blocks[0].run, blocks[0].lang)
	}
	blocks = blocks[1:]
	if got := []bool{blocks[0].run, blocks[1].run, blocks[2].run, blocks[3].run}; fmt.Sprint(got) != "[true false true false]" {
		t.Errorf("run = %v, want [true false true false]", got)
	}
	c := blocks[0].commands
	if len(c) != 2 || c[0].text != "stem a \\\n    --b" || strings.Join(c[0].want, "|") != "out 1|out 2" || c[0].line != 6 || c[1].text != "stem c" || len(c[1].want) != 0 || !c[0].check {
		t.Errorf("console commands = %+v", c)
	}
	s := blocks[2].commands
	if len(s) != 2 || s[0].text != "stem d   # note" || s[1].text != "stem e \\\n  --f" || s[0].check || s[1].line != 19 {
		t.Errorf("sh commands = %+v", s)
	}
}

func TestSplitOutputs(t *testing.T) {
	all := marker + " 0 start 1.0\nhello\n\n" + marker + " 0 rc 0 1.5\n" + marker + " 1 start 2.0\nbad\n" + marker + " 1 rc 3 4.0\n" + marker + " 2 start 3.0\nhung"
	outs, rcs, secs := splitOutputs(all, 3)
	if outs[0] != "hello\n" || rcs[0] != 0 || outs[1] != "bad" || rcs[1] != 3 || rcs[2] != -1 || secs[0] != 0.5 || secs[1] != 2 {
		t.Errorf("splitOutputs = %q %v %v", outs, rcs, secs)
	}
}

// TestLinks checks that every relative link of README.md and docs/*.md
// names a file of the repository and, with a #fragment, a heading of it
// (GitHub's anchors: lower case, punctuation dropped, spaces as hyphens).
func TestLinks(t *testing.T) {
	root := stembin.Root(t)
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(root, "README.md"), filepath.Join(root, "CHANGELOG.md"))
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	checked := 0
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(text), -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			body, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("%s: link %s: %v", filepath.Base(page), target, err)
				continue
			}
			checked++
			if frag != "" && !slices.Contains(anchors(string(body)), frag) {
				t.Errorf("%s: link %s: no heading of %s has that anchor", filepath.Base(page), target, file)
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d links checked: is the link pattern wrong?", checked)
	}
}

// anchors returns the GitHub anchors of a Markdown page's headings.
func anchors(page string) []string {
	var out []string
	drop := regexp.MustCompile("[^a-z0-9 _-]")
	for _, l := range strings.Split(page, "\n") {
		if h, ok := strings.CutPrefix(l, "#"); ok {
			h = strings.TrimLeft(h, "#")
			a := drop.ReplaceAllString(strings.ToLower(strings.TrimSpace(h)), "")
			out = append(out, strings.ReplaceAll(a, " ", "-"))
		}
	}
	return out
}

func TestAnchors(t *testing.T) {
	got := anchors("# Title\n## First run, test suite and GOEXPERIMENT=simd\ntext # not\n### RoG and GNN-RAG files\n")
	want := []string{"title", "first-run-test-suite-and-goexperimentsimd", "rog-and-gnn-rag-files"}
	if !slices.Equal(got, want) {
		t.Errorf("anchors = %q, want %q", got, want)
	}
}
