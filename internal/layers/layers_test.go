package layers

import (
	"os/exec"
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
	{[]string{"projection", "tracing", "tripgnn", "generation", "plan", "kg", "kgvec", "schema", "benchmark", "models", "vecindex", "settings", "train"},
		[]string{"eval", "cmd"}, "the evaluation harness and the CLI consume the pipeline; nothing below imports them"},
	{[]string{"projection", "tracing", "tripgnn", "generation", "plan", "kg", "kgvec", "schema", "benchmark", "models", "vecindex", "settings"},
		[]string{"train"}, "training consumes the stages; the pipeline and the stages never import it"},
	{[]string{"projection", "tracing", "tripgnn", "generation"}, []string{"plan"}, "stages do not import the pipeline that runs them"},
	{[]string{"tripgnn"}, []string{"tracing", "projection", "generation"}, "the guidance stage hands KG ids to the pipeline, not to tracing"},
	{[]string{"tracing"}, []string{"tripgnn", "projection", "generation"}, "tracing reads schema graphs and guidance sets, not the stages that make them"},
	{[]string{"kg", "schema", "models", "vecindex", "settings"}, []string{"projection", "tracing", "tripgnn", "generation", "plan", "kgvec", "benchmark", "constraint"},
		"seams and backends sit below every stage"},
	{[]string{"constraint"}, []string{"projection", "tracing", "tripgnn", "generation", "plan", "kgvec", "benchmark", "models"},
		"the constraint check reads the KG and schema graphs only, so that every stage and the pipeline may use it"},
}

func under(pkg string, prefixes []string) bool {
	for _, p := range prefixes {
		if pkg == p || strings.HasPrefix(pkg, p+"/") {
			return true
		}
	}
	return false
}

func TestDependenciesPointDown(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			imp = strings.TrimPrefix(imp, module)
			checked++
			for _, r := range rules {
				if under(pkg, r.from) && under(imp, r.banned) {
					t.Errorf("%s imports %s: %s", pkg, imp, r.why)
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d imports inside the module checked: go list did not see the module", checked)
	}
}
