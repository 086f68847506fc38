//go:build unix

package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stem-kgqa/stem/plan"
)

// The evidence viewer is tested in a real headless Chromium, the only way
// to know its script runs, asks, and draws: the DOM Chromium dumps after
// the page settles is checked against what the API answers for the same
// question.

// chromiumBinary finds Chromium, or skips the test; with
// STEM_REQUIRE_CHROMIUM=1 (as in CI) a missing browser fails instead, so
// the viewer's tests cannot silently stop running.
func chromiumBinary(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"/usr/bin/chromium", "chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("STEM_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("STEM_REQUIRE_CHROMIUM=1 but no chromium at /usr/bin/chromium or on PATH (apt-get install chromium)")
	}
	t.Skip("the evidence viewer's browser tests need Chromium (/usr/bin/chromium or chromium on PATH; Debian: apt-get install chromium); set STEM_REQUIRE_CHROMIUM=1 to fail instead")
	return ""
}

// runChromium runs headless Chromium once with args after the flags every
// run needs and returns what it printed on stdout.
func runChromium(t *testing.T, bin string, args ...string) string {
	t.Helper()
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		// Without these Chromium dials Google's services, and the
		// refused connections of a closed network stall the page.
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(),
		// Virtual time runs the page until its fetches and timers settle
		// (or 10 s of page time pass), so the DOM is dumped when done.
		"--virtual-time-budget=10000"}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(flags, args...)...)
	// Debian's chromium is a shell script that starts the browser, which
	// starts its helpers: only the process group reaches them all.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	if cmd.Process != nil {
		// A helper left behind would hold the profile directory the test
		// is about to remove.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if ctx.Err() != nil {
		err = fmt.Errorf("killed after %s: %w", time.Since(start).Round(time.Millisecond), ctx.Err())
	}
	if err != nil {
		t.Fatalf("chromium %s: %v\nstderr:\n%s", strings.Join(args, " "), err, tail(stderr.String(), 3000))
	}
	t.Logf("chromium %s: %s", args[len(args)-1], time.Since(start).Round(time.Millisecond))
	return stdout.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

var (
	startTag = regexp.MustCompile(`<([a-zA-Z]+)((?:\s+[^\s=>]+(?:="[^"]*")?)*)\s*/?>`)
	attr     = regexp.MustCompile(`([^\s=>]+)(?:="([^"]*)")?`)
	anyTag   = regexp.MustCompile(`<[^>]*>`)
)

// element is a start tag of the dumped DOM: Chromium serialises every
// attribute as name="value", escaped, so a regexp reads them exactly.
type element struct {
	tag   string
	attrs map[string]string
	// at is the offset of the tag's end in the DOM.
	at int
}

func (e element) classes() []string { return strings.Fields(e.attrs["class"]) }

func (e element) has(class string) bool { return slices.Contains(e.classes(), class) }

// elements returns the start tags named tag in dom, in order.
func elements(dom, tag string) []element {
	var out []element
	for _, m := range startTag.FindAllStringSubmatchIndex(dom, -1) {
		if !strings.EqualFold(dom[m[2]:m[3]], tag) {
			continue
		}
		e := element{tag: tag, attrs: map[string]string{}, at: m[1]}
		for _, a := range attr.FindAllStringSubmatch(dom[m[4]:m[5]], -1) {
			e.attrs[a[1]] = html.UnescapeString(a[2])
		}
		out = append(out, e)
	}
	return out
}

// byID returns the tag with the id and its inner HTML up to the first
// closing tag of its name: enough for the viewer's elements, none of which
// nests its own tag.
func byID(t *testing.T, dom, tag, id string) (element, string) {
	t.Helper()
	for _, e := range elements(dom, tag) {
		if e.attrs["id"] == id {
			if tag == "input" { // void: no inner HTML
				return e, ""
			}
			end := strings.Index(dom[e.at:], "</"+tag+">")
			if end < 0 {
				t.Fatalf("<%s id=%q> is never closed", tag, id)
			}
			return e, dom[e.at : e.at+end]
		}
	}
	t.Fatalf("no <%s id=%q> in the page:\n%s", tag, id, tail(dom, 4000))
	return element{}, ""
}

// text is the text of an HTML fragment, tags dropped and entities read.
func text(fragment string) string {
	return html.UnescapeString(anyTag.ReplaceAllString(fragment, ""))
}

// bodyState is the page's data-state, which the viewer sets when it is
// done or failed.
func bodyState(t *testing.T, dom string) string {
	t.Helper()
	b := elements(dom, "body")
	if len(b) != 1 {
		t.Fatalf("%d <body> in the dumped DOM (chromium printed %d bytes)", len(b), len(dom))
	}
	return b[0].attrs["data-state"]
}

func TestViewerInChromium(t *testing.T) {
	bin := chromiumBinary(t)

	t.Run("answer", func(t *testing.T) {
		t.Parallel()
		st := start(t, demoBackend(t, nil), Options{})
		const question = "who directed inception ?"
		// What the page must show is what the API answers.
		status, body := post(t, http.DefaultClient, st.URL+"/v1/ask", `{"question": "`+question+`", "explain": true}`)
		if status != 200 {
			t.Fatalf("API: %d %s", status, body)
		}
		want := decode[plan.View](t, body)
		if want.Explain == nil || len(want.Explain.Matched) == 0 {
			t.Fatalf("the API explains nothing to draw: %s", body)
		}
		url := st.URL + "/?q=who+directed+inception+%3F"
		dom := runChromium(t, bin, "--dump-dom", url)
		if s := bodyState(t, dom); s != "done" {
			_, e := byID(t, dom, "p", "error")
			t.Fatalf("data-state=%q, want done; #error: %q", s, text(e))
		}

		_, answers := byID(t, dom, "ol", "answers")
		items := 0
		for _, li := range elements(answers, "li") {
			if li.has("answer") {
				items++
			}
		}
		if items != len(want.Answers) || !strings.Contains(text(answers), "Christopher_Nolan") {
			t.Errorf("#answers has %d li.answer, want %d, with Christopher_Nolan: %q", items, len(want.Answers), text(answers))
		}
		if strings.Contains(answers, "unsupported") {
			t.Errorf("a supported answer is marked unsupported: %s", answers)
		}
		_, audit := byID(t, dom, "p", "audit")
		if a := text(audit); !strings.Contains(a, fmt.Sprintf("%d evidence triples", want.Audit.Evidence)) || !strings.Contains(a, "0 unbacked") {
			t.Errorf("#audit = %q, want %d evidence triples and 0 unbacked", a, want.Audit.Evidence)
		}
		if _, tm := byID(t, dom, "p", "timings"); !strings.Contains(text(tm), "trace ") {
			t.Errorf("#timings = %q", text(tm))
		}

		svgTag, graph := byID(t, dom, "svg", "graph")
		// One node per entity and one edge per distinct triple the API
		// matched, each edge titled with its T-Score.
		// A triple matched twice shows its best T-Score.
		wantNodes, best := map[string]bool{}, map[[3]string]plan.MatchedTripleView{}
		for _, m := range want.Explain.Matched {
			wantNodes[m.Triple[0]], wantNodes[m.Triple[2]] = true, true
			if old, ok := best[m.Triple]; !ok || m.TScore > old.TScore {
				best[m.Triple] = m
			}
		}
		wantEdges := map[[3]string]string{}
		for tr, m := range best {
			wantEdges[tr] = fmt.Sprintf("%s  T-Score %.3f (bias %.2f)", tr[1], m.TScore, m.Bias)
		}
		nodes := map[string]element{}
		edges := map[[3]string]element{}
		for _, g := range elements(graph, "g") {
			switch {
			case g.has("node"):
				nodes[g.attrs["data-name"]] = g
			case g.has("edge"):
				edges[[3]string{g.attrs["data-head"], g.attrs["data-rel"], g.attrs["data-tail"]}] = g
			}
		}
		if len(nodes) != len(wantNodes) {
			t.Errorf("%d nodes drawn, want %d: %v", len(nodes), len(wantNodes), wantNodes)
		}
		for n := range wantNodes {
			if _, ok := nodes[n]; !ok {
				t.Errorf("no node for %s", n)
			}
		}
		if got := strings.Count(graph, "<circle"); got != len(wantNodes) {
			t.Errorf("%d circles, want one per node (%d)", got, len(wantNodes))
		}
		if n := nodes["Christopher_Nolan"]; !n.has("answer") {
			t.Errorf("the answer's node is %+v, want class answer", n)
		}
		if n := nodes["Inception"]; !n.has("anchor") || n.has("answer") {
			t.Errorf("the anchor's node is %+v, want class anchor", n)
		}
		t.Logf("the page drew %d nodes and %d edges", len(nodes), len(edges))
		if len(edges) != len(wantEdges) {
			t.Errorf("%d edges drawn, want %d", len(edges), len(wantEdges))
		}
		directed := false
		for tr, title := range wantEdges {
			e, ok := edges[tr]
			if !ok {
				t.Errorf("no edge for %v", tr)
				continue
			}
			directed = directed || tr[1] == "directed_by"
			// The title is the edge's first child, its hover text.
			inner := graph[e.at:]
			got, _, _ := strings.Cut(strings.TrimPrefix(inner, "<title>"), "</title>")
			if !strings.HasPrefix(inner, "<title>") || html.UnescapeString(got) != title {
				t.Errorf("edge %v: title %q, want %q", tr, got, title)
			}
			if e, _, _ := strings.Cut(inner, "</g>"); !strings.Contains(e, `marker-end="url(#arrow`) || !strings.Contains(e, `class="rel">`+tr[1]+"<") {
				t.Errorf("edge %v lacks its arrowhead or its label: %s", tr, e)
			}
		}
		if !directed {
			t.Errorf("no directed_by edge among %v", wantEdges)
		}
		if vb := svgTag.attrs["viewBox"]; vb == "" {
			t.Errorf("the graph has no viewBox")
		}

		// The screenshot is for a person to look at: keep it where `go
		// test -artifacts` keeps test output.
		shot := filepath.Join(t.ArtifactDir(), "viewer.png")
		runChromium(t, bin, "--screenshot="+shot, "--window-size=1200,800", url)
		checkScreenshot(t, shot)
	})

	t.Run("no entity", func(t *testing.T) {
		t.Parallel()
		st := start(t, demoBackend(t, nil), Options{})
		status, body := post(t, http.DefaultClient, st.URL+"/v1/ask", `{"question": "what is the meaning of life ?", "explain": true}`)
		e := decode[errorBody](t, body)
		if status != http.StatusUnprocessableEntity || e.Code != "no_entity" || e.Error == "" {
			t.Fatalf("API: %d %s, want 422 no_entity", status, body)
		}
		dom := runChromium(t, bin, "--dump-dom", st.URL+"/?q=what+is+the+meaning+of+life+%3F")
		if s := bodyState(t, dom); s != "error" {
			t.Errorf("data-state=%q, want error", s)
		}
		tag, msg := byID(t, dom, "p", "error")
		if hasAttr(tag, "hidden") || text(msg) != e.Error {
			t.Errorf("#error (hidden %v) says %q, want the server's %q", hasAttr(tag, "hidden"), text(msg), e.Error)
		}
		if tag, _ := byID(t, dom, "section", "result"); !hasAttr(tag, "hidden") {
			t.Errorf("the results show after an error")
		}
	})

	t.Run("token", func(t *testing.T) {
		t.Parallel()
		st := start(t, demoBackend(t, nil), Options{Token: "s3cret"})
		dom := runChromium(t, bin, "--dump-dom", st.URL+"/?q=who+directed+inception+%3F")
		if s := bodyState(t, dom); s != "error" {
			t.Errorf("data-state=%q, want error", s)
		}
		if auth, _ := byID(t, dom, "div", "auth"); hasAttr(auth, "hidden") {
			t.Errorf("the token field stays hidden after a 401")
		}
		byID(t, dom, "input", "token")
		if _, msg := byID(t, dom, "p", "error"); !strings.Contains(text(msg), "wants a token") {
			t.Errorf("#error says %q, want it to ask for the token", text(msg))
		}
	})
}

func hasAttr(e element, name string) bool {
	_, ok := e.attrs[name]
	return ok
}

// checkScreenshot fails unless path is a 1200x800 PNG with something
// drawn on it: a blank page is one colour.
func checkScreenshot(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("chromium wrote no screenshot at %s", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	b := img.Bounds()
	if b.Dx() != 1200 || b.Dy() != 800 {
		t.Errorf("screenshot is %dx%d, want 1200x800", b.Dx(), b.Dy())
	}
	bg := img.At(b.Min.X, b.Min.Y)
	differ := 0
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			if img.At(x, y) != bg {
				differ++
			}
		}
	}
	if differ < 500 {
		t.Errorf("screenshot %s is nearly blank: %d sampled pixels differ from the background", path, differ)
	}
	t.Logf("screenshot: %s", path)
}
