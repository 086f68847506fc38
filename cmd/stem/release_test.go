package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stem-kgqa/stem/internal/stembin"
	stemversion "github.com/stem-kgqa/stem/internal/version"
)

// TestVersionFlags: stem version and stem --version print the same report,
// every fact on its own line.
func TestVersionFlags(t *testing.T) {
	byCommand, _, err := run(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	byFlag, _, err := run(t, "--version")
	if err != nil {
		t.Fatal(err)
	}
	if byCommand != byFlag {
		t.Errorf("stem version:\n%s\nstem --version:\n%s", byCommand, byFlag)
	}
	for _, want := range []string{"stem " + stemversion.Read().String() + "\n", "  module ", "  version ", "  revision ", "  modified ", "  go ", "  GOEXPERIMENT ", "  platform "} {
		if !strings.Contains(byCommand, want) {
			t.Errorf("no %q in\n%s", want, byCommand)
		}
	}
	out, _, err := run(t, "version", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var in stemversion.Info
	if err := json.Unmarshal([]byte(out), &in); err != nil || in.GoVersion == "" {
		t.Errorf("version --json: %v\n%s", err, out)
	}
}

// TestHealthzVersion: a server reports the version string stem version
// prints first.
func TestHealthzVersion(t *testing.T) {
	url := serveInProcess(t, "--vectors", tinyVectors)
	res, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var h map[string]string
	if err := json.NewDecoder(res.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	if h["version"] != stemversion.Read().String() || h["version"] == "dev" {
		t.Errorf("/healthz version %q, want %q", h["version"], stemversion.Read().String())
	}
}

// TestVersionOfBuild builds the binary as a user does and reads back what
// the build recorded: this module, the toolchain and GOEXPERIMENT of the
// build, and the checkout's commit when the build could see one.
func TestVersionOfBuild(t *testing.T) {
	bin := stembin.Build(t)
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var in stemversion.Info
	if err := json.Unmarshal(out, &in); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	goVersion, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want, _, _ := strings.Cut(strings.TrimSpace(string(goVersion)), "-X:"); in.Module != "github.com/stem-kgqa/stem" || in.GoVersion != want {
		t.Errorf("module %q go %q, want github.com/stem-kgqa/stem and %s", in.Module, in.GoVersion, want)
	}
	if want := os.Getenv("GOEXPERIMENT"); in.GOEXPERIMENT != want {
		t.Errorf("GOEXPERIMENT %q, want the build's %q", in.GOEXPERIMENT, want)
	}
	// The go command records a revision when the module root holds a .git
	// folder (not a worktree's .git file) and git answers.
	root := stembin.Root(t)
	head, gitErr := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	st, statErr := os.Stat(filepath.Join(root, ".git"))
	if gitErr == nil && statErr == nil && st.IsDir() {
		if in.Revision != strings.TrimSpace(string(head)) {
			t.Errorf("revision %q, want HEAD %s", in.Revision, head)
		}
		t.Logf("built at %s (modified %v): %s", in.Revision, in.Modified, in)
	} else if in.Revision != "" || in.Version != stemversion.Devel {
		t.Errorf("no git checkout to read, yet revision %q version %q", in.Revision, in.Version)
	}
	text, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(text), "\n"); first != "stem "+in.String() {
		t.Errorf("--version begins %q, want %q", first, "stem "+in.String())
	}
}

func TestCompletionScripts(t *testing.T) {
	for shell, want := range map[string][]string{
		"bash": {"complete -o bashdefault -o default -F _stem_complete stem", "--generate-bash-completion"},
		"zsh":  {"#compdef stem", "compdef _stem stem", "--generate-bash-completion"},
		"fish": {"-n '__fish_seen_subcommand_from eval' -f -l out-format -r", "-n '__fish_seen_subcommand_from completion' -f -a 'bash zsh fish'", "-a 'reason'", "-l kg -r"},
	} {
		out, _, err := run(t, "completion", shell)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s script lacks %q", shell, w)
			}
		}
	}
	for _, args := range [][]string{{"completion"}, {"completion", "csh"}} {
		if _, _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), "bash") {
			t.Errorf("stem %s: %v, want an error naming the shells", strings.Join(args, " "), err)
		}
	}
}

// TestCompletionInShells sources each script in its shell and completes,
// as a user's TAB does, against the built binary.
func TestCompletionInShells(t *testing.T) {
	bin := stembin.Build(t)
	dir := filepath.Dir(bin)
	env := append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	script := func(shell string) string {
		out, err := exec.Command(bin, "completion", shell).Output()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "stem."+shell)
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	shellRun := func(t *testing.T, name string, args ...string) string {
		t.Helper()
		path, err := exec.LookPath(name)
		if err != nil {
			t.Skipf("no %s here (Debian: apt-get install %s)", name, name)
		}
		cmd := exec.Command(path, args...)
		cmd.Env, cmd.Dir = env, dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		return string(out)
	}
	cases := []completionCase{
		{[]string{"stem", "ev"}, []string{"eval", "eval-plans", "eval-gnn"}, []string{"ask"}},
		{[]string{"stem", "kg", ""}, []string{"build", "stats", "neighbours"}, []string{"help"}},
		{[]string{"stem", "eval", "--out-f"}, []string{"--out-format"}, nil},
		{[]string{"stem", "completion", ""}, []string{"bash", "zsh", "fish"}, []string{"help"}},
	}
	t.Run("bash", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("source " + script("bash") + "\n")
		for _, c := range cases {
			fmt.Fprintf(&b, "COMP_WORDS=%s; COMP_CWORD=%d; COMPREPLY=(); _stem_complete; echo \"${COMPREPLY[*]}\"\n", shellArray(c.words), len(c.words)-1)
		}
		checkCompletions(t, shellRun(t, "bash", "-c", b.String()), cases)
	})
	t.Run("zsh", func(t *testing.T) {
		// compsys is not loaded in a script: _describe and _files are
		// stood in for by functions that print what they would offer
		// (_describe keeps what starts with the word typed, as it does).
		var b strings.Builder
		b.WriteString("compdef() { :; }\n_describe() { local -a o=(${(@)${(@P)2}%%:*}); print -r -- ${(M)o:#${words[CURRENT]}*}; }\n_files() { print FILES; }\nsource " + script("zsh") + "\n")
		for _, c := range cases {
			fmt.Fprintf(&b, "words=%s; CURRENT=%d; _stem\n", shellArray(c.words), len(c.words))
		}
		checkCompletions(t, shellRun(t, "zsh", "-fc", b.String()), cases)
	})
	t.Run("fish", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("source " + script("fish") + "\n")
		for _, c := range cases {
			b.WriteString("complete -C '" + strings.Join(c.words, " ") + "' | string split -f1 \\t | string join ' '\n")
		}
		checkCompletions(t, shellRun(t, "fish", "-c", b.String()), cases)
	})
}

// shellArray writes words as a bash or zsh array literal.
func shellArray(words []string) string {
	return "( '" + strings.Join(words, "' '") + "' )"
}

// completionCase is a command line whose last word is being completed,
// and completions it must and must not get.
type completionCase struct {
	words     []string
	want, not []string
}

// checkCompletions checks out, one line per case, against the cases.
func checkCompletions(t *testing.T, out string, cases []completionCase) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("%d lines for %d cases:\n%s", len(lines), len(cases), out)
	}
	for i, c := range cases {
		got := strings.Fields(lines[i])
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q completes to %q, want %q among them", strings.Join(c.words, " "), lines[i], w)
			}
		}
		for _, w := range c.not {
			if slices.Contains(got, w) {
				t.Errorf("%q completes to %q, with %q", strings.Join(c.words, " "), lines[i], w)
			}
		}
	}
}
