package pidfile_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/nodes/pidfile"
)

// parsePidfile parses this package's code, without its tests.
func parsePidfile(t *testing.T) (*token.FileSet, []*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var code []*ast.File
	for _, f := range pkgs["pidfile"].Files {
		code = append(code, f)
	}
	return fset, code
}

// aliased lists the exported aliases of types defined in internal
// packages: go doc shows no more of them than their doc comment, so it
// must show their fields and methods.
var aliased = map[string]reflect.Type{
	"UnsafeLinkError":   reflect.TypeFor[pidfile.UnsafeLinkError](),
	"UnsafeFolderError": reflect.TypeFor[pidfile.UnsafeFolderError](),
}

// What go doc shows of package pidfile is all a caller needs: an alias of
// an internal type has its fields and methods in its doc comment, and no
// doc comment links to an internal package, which go doc does not show.
func TestDocShowsInternalTypes(t *testing.T) {
	t.Parallel()
	fset, code := parsePidfile(t)
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
