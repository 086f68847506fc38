package layers

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/stem-kgqa/stem/"

// rules says which packages (by prefix below the module) may not import
// which others.
var rules = []struct {
	from   []string
	banned []string
	why    string
}{
	{[]string{"projection", "tracing", "tripgnn", "generation", "plan", "kg", "kgvec", "schema", "benchmark", "models", "vecindex", "settings", "train", "serve", "peers"},
		[]string{"eval", "cmd", "assets"}, "the evaluation harness, the CLI and what opens their environment (assets) consume the pipeline; nothing below imports them"},
	{[]string{"benchmark", "train"}, []string{"kg/backends", "kg/sparql"}, "a dataset or a training run is given its KG opener: benchmark and train import no KG backend"},
	{[]string{"projection"}, []string{"benchmark"}, "planners train from their own example types (pattern.Example), not from benchmark questions"},
	{[]string{"projection", "tracing", "tripgnn", "generation", "plan", "kg", "kgvec", "schema", "benchmark", "models", "vecindex", "settings"},
		[]string{"train"}, "training consumes the stages; the pipeline and the stages never import it"},
	{[]string{"projection", "tracing", "tripgnn", "generation"}, []string{"plan"}, "stages do not import the pipeline that runs them"},
	{[]string{"tripgnn"}, []string{"tracing", "projection", "generation"}, "the guidance stage hands KG ids to the pipeline, not to tracing"},
	{[]string{"tracing"}, []string{"tripgnn", "projection", "generation"}, "tracing reads schema graphs and guidance sets, not the stages that make them"},
	{[]string{"kg", "schema", "models", "vecindex", "settings"}, []string{"projection", "tracing", "tripgnn", "generation", "plan", "kgvec", "benchmark", "constraint"},
		"seams and backends sit below every stage"},
	{[]string{"constraint"}, []string{"projection", "tracing", "tripgnn", "generation", "plan", "kgvec", "benchmark", "models"},
		"the constraint check reads the KG and schema graphs only, so that every stage and the pipeline may use it"},
	{[]string{"plan"}, []string{"peers"}, "the pipeline names no peer system: each registers its own settings (peers.Retrievers)"},
	{[]string{"peers/signals"}, []string{"peers"}, "what the peers share imports none of them"},
	{[]string{"peers"}, []string{"tripgnn", "constraint", "train", "projection/pattern", "projection/compose", "projection/zeroshot", "projection/oracle"},
		"a rival, its trained stand-in (peers/signals.Classifier) and what the rivals share read none of STEM's planners, Triple-GNN, constraints or training code"},
	{[]string{"peers/gcr", "peers/graphraft", "peers/dog"}, []string{"projection", "schema"},
		"GCR, GraphRAFT and DoG, trained or not, read no schema graph; the planner-assisted mode reads plans through peers/signals alone"},
}

// shared is the package under peers that every peer may import.
const shared = "peers/signals"

// kgBackends are the KG backends beyond kg's own file formats; only their
// registration list, backendList, imports them (and they themselves).
var kgBackends = []string{"kg/sparql"}

const backendList = "kg/backends"

func under(pkg string, prefixes []string) bool {
	for _, p := range prefixes {
		if pkg == p || strings.HasPrefix(pkg, p+"/") {
			return true
		}
	}
	return false
}

// peerOf returns the peer system a package belongs to ("gcr" for
// peers/gcr and below), "" for a package that is no peer's (the
// registration list peers itself, and peers/signals).
func peerOf(pkg string) string {
	rest, ok := strings.CutPrefix(pkg, "peers/")
	if !ok || under(pkg, []string{shared}) {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}

// violations checks edges (package, import, both below the module) and
// returns one line per broken rule.
func violations(edges [][2]string) []string {
	var out []string
	for _, e := range edges {
		pkg, imp := e[0], e[1]
		for _, r := range rules {
			if under(pkg, r.from) && under(imp, r.banned) && !(pkg == imp) {
				out = append(out, fmt.Sprintf("%s imports %s: %s", pkg, imp, r.why))
			}
		}
		if under(imp, kgBackends) && !under(pkg, kgBackends) && pkg != backendList {
			out = append(out, fmt.Sprintf("%s imports %s: only %s imports a KG backend; everyone else opens a KG with its registry (kg.Registry.Open)", pkg, imp, backendList))
		}
		if a, b := peerOf(pkg), peerOf(imp); a != "" && b != "" && a != b {
			out = append(out, fmt.Sprintf("%s imports %s: no peer system imports another (what they share lives in %s)", pkg, imp, shared))
		}
	}
	return out
}

// moduleEdges lists the imports inside the module, as (package, import)
// below the module, of the lists go list's template imports names
// ("{{join .Imports \" \"}}").
func moduleEdges(t *testing.T, imports string) [][2]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} "+imports, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var edges [][2]string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, module) {
				edges = append(edges, [2]string{pkg, strings.TrimPrefix(imp, module)})
			}
		}
	}
	if len(edges) < 100 {
		t.Fatalf("only %d imports inside the module checked: go list did not see the module", len(edges))
	}
	return edges
}

func TestDependenciesPointDown(t *testing.T) {
	edges := moduleEdges(t, "{{join .Imports \" \"}}")
	for _, v := range violations(edges) {
		t.Error(v)
	}
}

// testViolations checks the imports of packages' tests. A test may reach
// up the layers for its fixtures (kg/synth's reads its questions back with
// benchmark), but it too opens a KG with the registry, names no other
// peer system, and plan's tests name no peer.
func testViolations(edges [][2]string) []string {
	var out []string
	for _, e := range edges {
		pkg, imp := e[0], e[1]
		a, b := peerOf(pkg), peerOf(imp)
		if under(imp, kgBackends) && !under(pkg, kgBackends) && pkg != backendList ||
			a != "" && b != "" && a != b || under(pkg, []string{"plan"}) && under(imp, []string{"peers"}) {
			out = append(out, violations([][2]string{e})...)
		}
	}
	return out
}

func TestTestsKeepTheSeams(t *testing.T) {
	edges := moduleEdges(t, "{{join .TestImports \" \"}} {{join .XTestImports \" \"}}")
	for _, v := range testViolations(edges) {
		t.Error("a test: " + v)
	}
	// Each of these rules fails on a deliberate violation in a test; the
	// layers' other rules do not apply to tests.
	for _, bad := range [][2]string{{"eval", "kg/sparql"}, {"serve", "kg/sparql"}, {"peers/dog", "peers/gcr"}, {"plan", "peers/simgrag"}} {
		if len(testViolations([][2]string{bad})) == 0 {
			t.Errorf("a test of %s importing %s: no violation, want one", bad[0], bad[1])
		}
	}
	for _, ok := range [][2]string{{"kg/synth", "benchmark"}, {"kg/sparql", "kg/sparql"}, {"kg/backends", "kg/sparql"}, {"peers/dog", "peers/signals"}} {
		if got := testViolations([][2]string{ok}); len(got) != 0 {
			t.Errorf("a test of %s importing %s is allowed, got %q", ok[0], ok[1], got)
		}
	}
}

// Each rule fails on a deliberate violation, and the edges the peers are
// meant to have pass.
func TestRulesCatchViolations(t *testing.T) {
	for _, c := range []struct {
		pkg, imp, want string
	}{
		{"peers/dog", "peers/gcr", "no peer system imports another"},
		{"peers/gcr/internal/x", "peers/simgrag", "no peer system imports another"},
		{"plan", "peers", "the pipeline names no peer system"},
		{"plan", "peers/gcr", "the pipeline names no peer system"},
		{"peers/signals", "peers/dog", "what the peers share imports none of them"},
		{"peers/signals", "projection/pattern", "read none of STEM's planners"},
		{"peers/gcr", "tripgnn", "read none of STEM's planners"},
		{"peers/graphraft", "schema", "read no schema graph"},
		{"tracing", "plan", "stages do not import the pipeline"},
		{"cmd/stem", "kg/sparql", "only kg/backends imports a KG backend"},
		{"internal/virtuoso", "kg/sparql", "only kg/backends imports a KG backend"},
		{"eval", "kg/sparql", "only kg/backends imports a KG backend"},
		{"benchmark", "kg/sparql", "benchmark and train import no KG backend"},
		{"benchmark", "kg/backends", "benchmark and train import no KG backend"},
		{"train/chains", "kg/backends", "benchmark and train import no KG backend"},
		{"projection/pattern", "benchmark", "planners train from their own example types"},
		{"plan", "assets", "nothing below imports them"},
	} {
		got := violations([][2]string{{c.pkg, c.imp}})
		if !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, c.want) }) {
			t.Errorf("%s -> %s: violations %q, want one saying %q", c.pkg, c.imp, got, c.want)
		}
	}
	for _, ok := range [][2]string{{"peers/dog", "peers/signals"}, {"peers", "peers/gcr"}, {"peers/gcr", "plan"}, {"peers/signals", "plan"}, {"cmd/stem", "peers"},
		{"kg/backends", "kg/sparql"}, {"kg/sparql", "kg"}, {"cmd/stem", "kg/backends"}, {"assets", "kg/backends"}, {"eval/runner", "assets"}, {"train", "kg"}} {
		if got := violations([][2]string{ok}); len(got) != 0 {
			t.Errorf("%s -> %s is allowed, got %q", ok[0], ok[1], got)
		}
	}
}
