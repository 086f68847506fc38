package layers

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The code's shape, measured over every non-test Go file of the module so
// that it cannot drift back (issue 46): how many functions take six or
// more parameters or two or more bools, how long Pipeline.Answer is, and
// how many places outside package kg guess a KG's kind by asserting
// kg.Neighbourhooder.
const (
	maxManyParams   = 40 // functions with six or more parameters
	maxBoolParams   = 5  // functions with two or more bool parameters
	maxAnswerLines  = 60 // plan.Pipeline.Answer, braces included
	maxNeighbourAsk = 1  // kg.Neighbourhooder type assertions outside kg
)

// shape is what measure counts.
type shape struct {
	many, bools   []string // the functions over each threshold
	answerLines   int
	neighbourAsks []string
}

// measure parses every non-test Go file under root.
func measure(root string) (shape, error) {
	var s shape
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || n == "node_modules" || (strings.HasPrefix(n, ".") && path != root) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		inKG := filepath.Dir(rel) == "kg"
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				name := rel + ":" + n.Name.Name
				params, bools := 0, 0
				for _, fld := range n.Type.Params.List {
					k := max(1, len(fld.Names))
					params += k
					if id, ok := fld.Type.(*ast.Ident); ok && id.Name == "bool" {
						bools += k
					}
				}
				if params >= 6 {
					s.many = append(s.many, fmt.Sprintf("%s (%d parameters)", name, params))
				}
				if bools >= 2 {
					s.bools = append(s.bools, fmt.Sprintf("%s (%d bools)", name, bools))
				}
				if rel == filepath.Join("plan", "pipeline.go") && n.Name.Name == "Answer" && n.Recv != nil {
					s.answerLines = fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1
				}
			case *ast.TypeAssertExpr:
				if sel, ok := n.Type.(*ast.SelectorExpr); ok && !inKG && sel.Sel.Name == "Neighbourhooder" {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "kg" {
						s.neighbourAsks = append(s.neighbourAsks, fset.Position(n.Pos()).String())
					}
				}
			}
			return true
		})
		return nil
	})
	sort.Strings(s.many)
	sort.Strings(s.bools)
	return s, err
}

func TestShape(t *testing.T) {
	s, err := measure(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("functions with six or more parameters: %d (at most %d)", len(s.many), maxManyParams)
	t.Logf("functions with two or more bool parameters: %d (at most %d)", len(s.bools), maxBoolParams)
	t.Logf("plan.Pipeline.Answer: %d lines (at most %d)", s.answerLines, maxAnswerLines)
	t.Logf("kg.Neighbourhooder type assertions outside kg: %d (at most %d)", len(s.neighbourAsks), maxNeighbourAsk)
	if len(s.many) > maxManyParams {
		t.Errorf("%d functions take six or more parameters, at most %d may: group them into a struct\n%s", len(s.many), maxManyParams, strings.Join(s.many, "\n"))
	}
	if len(s.bools) > maxBoolParams {
		t.Errorf("%d functions take two or more bool parameters, at most %d may: use a named type\n%s", len(s.bools), maxBoolParams, strings.Join(s.bools, "\n"))
	}
	if s.answerLines == 0 || s.answerLines > maxAnswerLines {
		t.Errorf("plan.Pipeline.Answer is %d lines (0: not found), at most %d: it reads as the list of stages", s.answerLines, maxAnswerLines)
	}
	if len(s.neighbourAsks) > maxNeighbourAsk {
		t.Errorf("%d kg.Neighbourhooder type assertions outside kg, at most %d: the graph source is chosen once (plan.Source)\n%s", len(s.neighbourAsks), maxNeighbourAsk, strings.Join(s.neighbourAsks, "\n"))
	}
}
