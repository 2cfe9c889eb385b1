package multi_test

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// The package doc opens with the main example, Spec -> Start -> StopWait,
// where a reader of go doc sees it (Example functions are not shown by
// go doc ./multi), and the example is Go.
func TestPackageDocExample(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var text string
	if len(pkgs["multi"].Files) == 0 {
		t.Fatal("no package multi here")
	}
	for _, f := range pkgs["multi"].Files {
		if f.Doc != nil && strings.HasPrefix(f.Doc.Text(), "Package multi") {
			text = f.Doc.Text()
		}
	}
	// The first code block, before any heading.
	var block []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "# ") {
			break
		}
		if code, ok := strings.CutPrefix(line, "\t"); ok {
			block = append(block, code)
		} else if len(block) > 0 {
			break
		}
	}
	code := strings.Join(block, "\n")
	for _, call := range []string{"nodes.Spec{", ".Nodes()", "multi.Cluster{", ".Start(ctx)", ".StopWait(ctx, multi.StopOptions{"} {
		if !strings.Contains(code, call) {
			t.Errorf("the package doc's first example, before any heading, has no %s:\n%s", call, code)
		}
	}
	// "..." stands for the caller's own work.
	src := "package p\nfunc f() error {\n" + strings.ReplaceAll(code, "\n...\n", "\n") + "\nreturn nil\n}\n"
	if _, err := parser.ParseFile(fset, "doc.go", src, 0); err != nil {
		t.Errorf("the package doc's example is not Go: %v\n%s", err, code)
	}
}
