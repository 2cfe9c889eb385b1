package main

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The calls that send a signal, or start a process, by their full names
// (types.Func.FullName); a package that makes one does that.
var (
	signalCalls = map[string]bool{
		"syscall.Kill": true, "golang.org/x/sys/unix.Kill": true, "golang.org/x/sys/unix.Tgkill": true,
		"golang.org/x/sys/unix.Tkill": true, "golang.org/x/sys/unix.PidfdSendSignal": true,
		"(*os.Process).Signal": true, "(*os.Process).Kill": true,
	}
	startCalls = map[string]bool{
		"os.StartProcess": true, "syscall.ForkExec": true, "syscall.StartProcess": true,
		"syscall.Exec": true, "golang.org/x/sys/unix.Exec": true,
		"(*os/exec.Cmd).Start": true, "(*os/exec.Cmd).Run": true, "(*os/exec.Cmd).Output": true,
		"(*os/exec.Cmd).CombinedOutput": true,
	}
	// An assembly file that makes the clone system call starts a process.
	cloneRE = regexp.MustCompile(`(?i)SYS_clone|SYS_vfork|SYS_fork`)
)

// listedPackage is what go list says of a package.
type listedPackage struct {
	ImportPath, Dir, Export string
	GoFiles, SFiles         []string
	Standard                bool
}

// effects returns, for each package of the module (but the tests'
// helpers), the places where it sends a signal and where it starts a
// process, as this machine builds it.
func effects(t *testing.T) (signals, starts map[string][]string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Dir,Export,GoFiles,SFiles,Standard", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports := map[string]string{}
	var ours []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
		if strings.HasPrefix(p.ImportPath, modulePath+"/") && !strings.Contains(p.ImportPath, "/testdata/") {
			ours = append(ours, p)
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) { return os.Open(exports[path]) })
	signals, starts = map[string][]string{}, map[string][]string{}
	for _, p := range ours {
		rel := strings.TrimPrefix(p.ImportPath, modulePath+"/")
		if rel == "internal/testutil" {
			continue // only tests import it
		}
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
		if _, err := (&types.Config{Importer: imp}).Check(p.ImportPath, fset, files, info); err != nil {
			t.Fatalf("%s: %v", p.ImportPath, err)
		}
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				name := calleeName(info, call.Fun)
				at := fset.Position(call.Pos()).String()
				switch {
				case signalCalls[name]:
					signals[rel] = append(signals[rel], at+" "+name)
				case startCalls[name]:
					starts[rel] = append(starts[rel], at+" "+name)
				case opensCgroupKill(name, call):
					signals[rel] = append(signals[rel], at+" cgroup.kill")
				}
				return true
			})
		}
		for _, name := range p.SFiles {
			b, err := os.ReadFile(filepath.Join(p.Dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if cloneRE.Match(b) {
				starts[rel] = append(starts[rel], name+" clone")
			}
		}
	}
	return signals, starts
}

// calleeName is the full name of the function a call calls, "" if it is
// not a named function.
func calleeName(info *types.Info, fun ast.Expr) string {
	var id *ast.Ident
	switch f := fun.(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	default:
		return ""
	}
	if fn, ok := info.Uses[id].(*types.Func); ok {
		return fn.FullName()
	}
	return ""
}

// opensCgroupKill reports whether call opens a cgroup's cgroup.kill
// (writing 1 there SIGKILLs the whole cgroup).
func opensCgroupKill(name string, call *ast.CallExpr) bool {
	if !strings.Contains(name, "Open") {
		return false
	}
	for _, a := range call.Args {
		if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil && filepath.Base(s) == "cgroup.kill" {
				return true
			}
		}
	}
	return false
}

// pkgPathRE is a package's path in the module, as the table names it.
var pkgPathRE = regexp.MustCompile(`^[a-z]+(/[a-z]+)*$`)

// effectRowRE is a row of the page's table of who may signal or start a
// process: | sends a signal | `a`, `b` |
var effectRowRE = regexp.MustCompile("^\\| (sends a signal|starts a process) \\|([^|]*)\\|")

// TestDocsSayWhoSignals holds docs/architecture.md's table of the
// packages that send signals and that start processes to the code: each
// package the code shows doing it is listed, and each listed does it.
func TestDocsSayWhoSignals(t *testing.T) {
	b, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string][]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := effectRowRE.FindStringSubmatch(line); m != nil {
			for _, p := range tickRE.FindAllStringSubmatch(m[2], -1) {
				if pkgPathRE.MatchString(p[1]) {
					listed[m[1]] = append(listed[m[1]], p[1])
				}
			}
		}
	}
	signals, starts := effects(t)
	for what, found := range map[string]map[string][]string{"sends a signal": signals, "starts a process": starts} {
		if len(listed[what]) == 0 {
			t.Errorf("docs/architecture.md has no row | %s | `package`, ... |", what)
		}
		var pkgs []string
		for p := range found {
			pkgs = append(pkgs, p)
		}
		sort.Strings(pkgs)
		for _, p := range pkgs {
			if !slices.Contains(listed[what], p) {
				t.Errorf("docs/architecture.md: %s: package %s is not listed, but does: %s", what, p, strings.Join(found[p], "; "))
			}
		}
		for _, p := range listed[what] {
			if len(found[p]) == 0 {
				t.Errorf("docs/architecture.md: %s: package %s is listed, but does not", what, p)
			}
		}
	}
}
