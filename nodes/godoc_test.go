package nodes_test

import (
	"go/ast"
	"go/doc"
	"go/format"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// parseNodes parses this package's files: its code and its tests.
func parseNodes(t *testing.T) (fset *token.FileSet, code, tests []*ast.File) {
	t.Helper()
	fset = token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range pkgs["nodes"].Files {
		code = append(code, f)
	}
	for _, f := range pkgs["nodes_test"].Files {
		tests = append(tests, f)
	}
	return fset, code, tests
}

// The package doc opens with an example a reader of go doc sees, and it
// is ExampleSpec_Nodes, which runs: code and output.
func TestPackageDocExample(t *testing.T) {
	t.Parallel()
	fset, code, tests := parseNodes(t)
	p, err := doc.NewFromFiles(fset, code, "github.com/multi-launcher/multi/nodes")
	if err != nil {
		t.Fatal(err)
	}
	var block, output []string
	for _, line := range strings.Split(p.Doc, "\n") {
		if !strings.HasPrefix(line, "\t") {
			if len(block) > 0 {
				break // the first code block only
			}
			continue
		}
		line = strings.TrimPrefix(line, "\t")
		if out, ok := strings.CutPrefix(line, "// "); ok {
			output = append(output, out)
		} else {
			block = append(block, line)
		}
	}
	if len(block) == 0 {
		t.Fatal("the package doc has no example")
	}
	var ex *doc.Example
	for _, e := range doc.Examples(tests...) {
		if e.Name == "Spec_Nodes" {
			ex = e
		}
	}
	if ex == nil {
		t.Fatal("no ExampleSpec_Nodes")
	}
	var b strings.Builder
	if err := format.Node(&b, fset, ex.Code); err != nil {
		t.Fatal(err)
	}
	body := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(b.String(), "{\n"), "}"))
	var want []string
	for _, line := range strings.Split(body, "\n") {
		want = append(want, strings.TrimPrefix(line, "\t"))
	}
	if strings.Join(block, "\n") != strings.Join(want, "\n") {
		t.Errorf("the package doc's example:\n%q\nExampleSpec_Nodes:\n%q", block, want)
	}
	if got := strings.Join(output, "\n"); got != strings.TrimSpace(ex.Output) {
		t.Errorf("the package doc's output:\n%s\nExampleSpec_Nodes's:\n%s", got, ex.Output)
	}
}
