package nodes_test

import (
	"go/ast"
	"go/doc"
	"go/format"
	"go/parser"
	"go/token"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/nodes"
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

// aliased lists the exported aliases of types defined in internal
// packages: go doc shows no more of them than their doc comment, so it
// must show their fields and methods.
var aliased = map[string]reflect.Type{
	"UnsafeLinkError":   reflect.TypeFor[nodes.UnsafeLinkError](),
	"UnsafeFolderError": reflect.TypeFor[nodes.UnsafeFolderError](),
}

// What go doc shows of package nodes is all a caller needs: an alias of
// an internal type has its fields and methods in its doc comment, and no
// doc comment links to an internal package, which go doc does not show.
func TestDocShowsInternalTypes(t *testing.T) {
	t.Parallel()
	fset, code, _ := parseNodes(t)
	found := map[string]bool{}
	for _, f := range code {
		internal := map[string]bool{}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(path, "/internal/") {
				internal[path[strings.LastIndex(path, "/")+1:]] = true
			}
		}
		for _, cg := range f.Comments {
			for name := range internal {
				if strings.Contains(cg.Text(), "["+name+".") {
					t.Errorf("%s: a doc link into internal package %s, which go doc does not show", fset.Position(cg.Pos()), name)
				}
			}
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				sel, ok := ts.Type.(*ast.SelectorExpr)
				if !ts.Assign.IsValid() || !ok || !ts.Name.IsExported() {
					continue
				}
				if x, ok := sel.X.(*ast.Ident); !ok || !internal[x.Name] {
					continue
				}
				found[ts.Name.Name] = true
				typ, ok := aliased[ts.Name.Name]
				if !ok {
					t.Errorf("%s aliases an internal type: add it to aliased", ts.Name.Name)
					continue
				}
				text := g.Doc.Text()
				if ts.Doc != nil {
					text = ts.Doc.Text()
				}
				checkAliasDoc(t, ts.Name.Name, typ, text)
			}
		}
	}
	for name := range aliased {
		if !found[name] {
			t.Errorf("aliased names %s, which is not an alias of an internal type", name)
		}
	}
}

// checkAliasDoc checks that doc shows every exported field of typ, with
// its type, and every method of *typ.
func checkAliasDoc(t *testing.T, name string, typ reflect.Type, doc string) {
	t.Helper()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		re := regexp.MustCompile(`(?m)^\t\t` + regexp.QuoteMeta(f.Name) + ` +` + regexp.QuoteMeta(f.Type.String()) + `\b`)
		if !re.MatchString(doc) {
			t.Errorf("%s's doc does not show its field %s %s", name, f.Name, f.Type)
		}
	}
	pt := reflect.PointerTo(typ)
	for i := range pt.NumMethod() {
		m := pt.Method(i)
		re := regexp.MustCompile(`(?m)^\tfunc \(\w+ \*?` + name + `\) ` + m.Name + `\(`)
		if !re.MatchString(doc) {
			t.Errorf("%s's doc does not show its method %s", name, m.Name)
		}
	}
}
