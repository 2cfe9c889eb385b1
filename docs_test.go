package main

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The pages that describe the code, checked against it: every file they
// name must exist, and every Go name they put in backticks must be declared
// somewhere in the module.
var codeDocs = []string{"docs/architecture.md"}

// notOurs are words in backticks that look like Go names but are not ours to
// declare: system calls, the C library's and the kernel's names, shell words.
var notOurs = map[string]bool{
	// system calls and kernel interfaces
	"clone": true, "close_range": true, "dup3": true, "execve": true, "fchdir": true,
	"fchmod": true, "fcntl": true, "flock": true, "fsync": true, "ftruncate": true,
	"mkdirat": true, "open": true, "openat2": true, "pidfd_open": true,
	"pidfd_send_signal": true, "pwrite": true, "renameat2": true, "setsid": true,
	"statx": true, "unlinkat": true, "wait4": true, "epoll": true, "prlimit64": true,
	"cgroup.procs": true, "cgroup.kill": true,
	// command-line words
	"lost": true, "run": true, "start": true, "stop": true, "stopwait": true,
	"status": true, "restart": true, "kill": true,
	// other programs' names: sshd's option, os/exec's SysProcAttr field
	"StrictModes": true, "Setsid": true,
}

// stdPackages are the standard library's packages a page may qualify a
// name with; such names are the standard library's to keep.
var stdPackages = map[string]bool{
	"errors": true, "exec": true, "os": true, "syscall": true, "runtime": true,
	"unix": true, "time": true, "context": true, "fmt": true, "io": true,
}

// decls is what the module declares, by the forms a page names it in:
// "Name", "Type.Member", "pkg.Name" and "pkg.Type.Member".
type decls struct {
	names    map[string]bool // bare names: top-level, methods, fields
	types    map[string]bool // type names, to tell a qualifier
	packages map[string]bool // package names
	files    []string        // every file of the tree, slash-separated
	// imports are the module's own packages each folder's non-test
	// files import, on any OS ("." for the root).
	imports map[string]map[string]bool
}

// modulePath is this module's import path.
const modulePath = "github.com/multi-launcher/multi"

func loadDecls(t *testing.T) *decls {
	t.Helper()
	d := &decls{names: map[string]bool{}, types: map[string]bool{}, packages: map[string]bool{},
		imports: map[string]map[string]bool{}}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if p != "." && (strings.HasPrefix(e.Name(), ".") || e.Name() == "bin") {
				return filepath.SkipDir
			}
			d.files = append(d.files, filepath.ToSlash(p)+"/")
			return nil
		}
		d.files = append(d.files, filepath.ToSlash(p))
		if !strings.HasSuffix(p, ".go") || strings.Contains(filepath.ToSlash(p), "testdata/") || strings.HasPrefix(p, "contrib") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		d.add(f)
		if !strings.HasSuffix(p, "_test.go") {
			dir := filepath.ToSlash(filepath.Dir(p))
			if d.imports[dir] == nil {
				d.imports[dir] = map[string]bool{}
			}
			for _, im := range f.Imports {
				if rest, ok := strings.CutPrefix(strings.Trim(im.Path.Value, `"`), modulePath+"/"); ok {
					d.imports[dir][rest] = true
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (d *decls) add(f *ast.File) {
	pkg := f.Name.Name
	d.packages[pkg] = true
	name := func(parts ...string) {
		n := strings.Join(parts, ".")
		d.names[n] = true
		d.names[pkg+"."+n] = true
	}
	members := func(typ string, spec ast.Expr) {
		var list *ast.FieldList
		switch s := spec.(type) {
		case *ast.StructType:
			list = s.Fields
		case *ast.InterfaceType:
			list = s.Methods
		}
		if list == nil {
			return
		}
		for _, fld := range list.List {
			for _, n := range fld.Names {
				name(typ, n.Name)
				d.names[n.Name] = true
			}
			if len(fld.Names) == 0 { // embedded: reached through the type's name
				if id := baseType(fld.Type); id != "" {
					name(typ, id)
				}
			}
		}
	}
	for _, decl := range f.Decls {
		switch x := decl.(type) {
		case *ast.FuncDecl:
			if x.Recv != nil && len(x.Recv.List) == 1 {
				if recv := baseType(x.Recv.List[0].Type); recv != "" {
					name(recv, x.Name.Name)
				}
			}
			name(x.Name.Name)
		case *ast.GenDecl:
			for _, s := range x.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					name(s.Name.Name)
					d.types[s.Name.Name] = true
					members(s.Name.Name, s.Type)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						name(n.Name)
					}
				}
			}
		}
	}
}

// baseType is T of T, *T, T[P] and pkg.T.
func baseType(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.StarExpr:
		return baseType(x.X)
	case *ast.IndexExpr:
		return baseType(x.X)
	case *ast.IndexListExpr:
		return baseType(x.X)
	case *ast.SelectorExpr:
		return x.Sel.Name
	}
	return ""
}

// exists reports whether the pattern (a path or a glob relative to the
// module's root; a folder ends in "/") names at least one file or folder.
func (d *decls) exists(pattern string) bool {
	for _, f := range d.files {
		if ok, _ := path.Match(pattern, f); ok {
			return true
		}
	}
	return false
}

// existsAnywhere reports whether a bare file name or glob matches a file in
// some folder of the tree.
func (d *decls) existsAnywhere(pattern string) bool {
	for _, f := range d.files {
		if ok, _ := path.Match(pattern, path.Base(f)); ok && !strings.HasSuffix(f, "/") {
			return true
		}
	}
	return false
}

// known reports whether a Go name as a page writes it is declared: a bare
// name, Type.Member, pkg.Name or pkg.Type.Member; a qualifier that is
// neither ours nor a type of ours is a receiver variable ("c.report"),
// and then the member must exist on some type.
func (d *decls) known(n string) bool {
	if d.names[n] || d.packages[n] {
		return true
	}
	parts := strings.Split(n, ".")
	if len(parts) == 1 {
		return false
	}
	if stdPackages[parts[0]] && !d.names[parts[0]] {
		return true
	}
	if !d.packages[parts[0]] && !d.types[parts[0]] && len(parts[0]) <= 2 {
		return d.names[strings.Join(parts[1:], ".")]
	}
	return false
}

var (
	// a file: a name (or glob) ending in one of the tree's extensions
	fileRE = regexp.MustCompile(`[A-Za-z0-9_*./-]*[A-Za-z0-9_*]\.(go|s|md|txtar|sh)\b`)
	// a folder in the tree's first column, or in backticks
	folderRE = regexp.MustCompile(`^[a-z][A-Za-z0-9_.-]*(/[A-Za-z0-9_.*-]+)*/$`)
	// a backticked span
	tickRE = regexp.MustCompile("`([^`]+)`")
	// a Go name, maybe qualified
	goNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
	// in the tree's descriptions, names of ours: camelCase or CamelCase
	// with an inner capital, or pkg.Name
	treeNameRE = regexp.MustCompile(`\b([a-z]+\.)?[A-Za-z][a-z0-9]+[A-Z][A-Za-z0-9]*\b|\b[a-z]+\.[A-Z][A-Za-z0-9]*\b`)
	// a C or kernel constant: SHOUTING
	constRE = regexp.MustCompile(`^[A-Z0-9_]+$`)
)

// goName turns a backticked span into the Go name it mentions, or "" if
// it is not one: "(*Cluster).Start" -> "Cluster.Start", "c.results()" ->
// "c.results", "multi.Cluster{Detach: true}" -> "multi.Cluster".
func goName(span string) string {
	s := span
	if fileRE.MatchString(s) {
		return "" // a file, checked as one
	}
	if i := strings.IndexAny(s, "({"); i > 0 {
		s = s[:i]
	}
	if strings.HasPrefix(s, "(*") {
		if i := strings.Index(span, ")."); i > 0 {
			s = span[2:i] + "." + strings.TrimRight(span[i+2:], "()")
		}
	}
	if !goNameRE.MatchString(s) || constRE.MatchString(s) || notOurs[s] {
		return ""
	}
	return s
}

// importRowRE is a row of the import table: | `pkg` | owns | `a`, `b` |
var importRowRE = regexp.MustCompile("^\\| `([a-z/]+)` \\|[^|]*\\|([^|]*)\\|$")

// checkImports returns the rows of the page's import table that a package
// breaks: it imports one of ours the row does not allow, or is not there.
func checkImports(d *decls, text string) []docError {
	var errs []docError
	for n, line := range strings.Split(text, "\n") {
		m := importRowRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		dir := m[1]
		if dir == "main" {
			dir = "."
		}
		if !d.exists(dir + "/") {
			errs = append(errs, docError{n + 1, "names package " + m[1] + ", which the tree does not hold"})
			continue
		}
		allowed := map[string]bool{}
		for _, t := range tickRE.FindAllStringSubmatch(m[2], -1) {
			allowed[t[1]] = true
		}
		var extra []string
		for im := range d.imports[dir] {
			if !allowed[im] {
				extra = append(extra, im)
			}
		}
		sort.Strings(extra)
		for _, im := range extra {
			errs = append(errs, docError{n + 1, "says package " + m[1] + " may not import " + im + ", which it does"})
		}
	}
	return errs
}

type docError struct {
	line int
	what string
}

// checkDoc returns what the page names that the tree does not hold.
func checkDoc(d *decls, text string) []docError {
	var errs []docError
	fail := func(line int, what string) {
		errs = append(errs, docError{line, "names " + what + ", which the tree does not hold"})
	}
	inTree, folder := false, ""
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			inTree, folder = !inTree, ""
			continue
		}
		if inTree {
			// The tree: a line at the left margin names a folder (or a
			// file of the root), an indented one files of that folder.
			fields := strings.Fields(line)
			if len(fields) == 0 {
				continue
			}
			desc := line
			if !strings.HasPrefix(line, " ") {
				first := fields[0]
				desc = strings.TrimPrefix(line, first)
				if folderRE.MatchString(first) {
					folder = first
					if !d.exists(first) {
						fail(n, "folder "+first)
					}
				} else {
					folder = ""
					if !d.exists(first) {
						fail(n, "file "+first)
					}
				}
			}
			for _, f := range fileRE.FindAllString(desc, -1) {
				if !d.exists(folder+f) && !d.exists(f) {
					fail(n, "file "+folder+f)
				}
			}
			for _, w := range strings.Fields(desc) {
				w = strings.Trim(w, "(),;:")
				if strings.HasSuffix(w, "/") && folderRE.MatchString(w) && !d.exists(folder+w) && !d.exists(w) {
					fail(n, "folder "+folder+w)
				}
			}
			for _, name := range treeNameRE.FindAllString(desc, -1) {
				if !notOurs[name] && !d.known(name) {
					fail(n, "Go name "+name)
				}
			}
			continue
		}
		// Prose: files anywhere in the line; Go names in backticks.
		for _, f := range fileRE.FindAllString(line, -1) {
			if strings.HasPrefix(f, "_") {
				f = "*" + f // a suffix: "_linux.go"
			}
			if strings.Contains(f, "/") {
				if !d.exists(strings.TrimPrefix(f, "/")) {
					fail(n, "file "+f)
				}
			} else if !d.existsAnywhere(f) {
				fail(n, "file "+f)
			}
		}
		for _, m := range tickRE.FindAllStringSubmatch(line, -1) {
			span := m[1]
			if strings.Contains(span, "/") && !strings.ContainsAny(span, " .") && !strings.HasPrefix(span, "/") {
				p := strings.TrimSuffix(span, "/") + "/"
				if !d.exists(p) {
					fail(n, "folder "+span)
				}
				continue
			}
			if name := goName(span); name != "" && !d.known(name) {
				fail(n, "Go name "+name)
			}
		}
	}
	return errs
}

// TestDocsNameWhatExists keeps the pages that map the code true to it: a
// file, folder or Go name they mention that is not in the tree fails.
func TestDocsNameWhatExists(t *testing.T) {
	d := loadDecls(t)
	for _, doc := range codeDocs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		errs := append(checkDoc(d, string(b)), checkImports(d, string(b))...)
		sort.Slice(errs, func(i, j int) bool { return errs[i].line < errs[j].line })
		for _, e := range errs {
			t.Errorf("%s:%d: %s", doc, e.line, e.what)
		}
	}
}

// TestDocsCheckFails proves the check: a page naming what does not exist
// is caught, one naming what does is not.
func TestDocsCheckFails(t *testing.T) {
	d := loadDecls(t)
	bad := "```\nmulti/\n  nosuch.go  a file\n  verbs.go   NoSuchFunc here\n```\n" +
		"`multi/nosuch.go`, `waiter/nosuch_*.go`, `signalKeepNot`, `Spec.NoSuch`, `pidfile.NoSuch`, `(*Cluster).NoSuch`, `nosuch/`\n"
	if errs := checkDoc(d, bad); len(errs) != 9 {
		t.Errorf("a page naming 9 things that do not exist: %d errors, want 9: %v", len(errs), errs)
	}
	good := "```\nmulti/\n  verbs.go   Cluster.StopWait, CheckPID\n```\n" +
		"`multi/verbs.go`, `waiter/fds_*.go`, `SignalKeep`, `Spec.Nodes`, `pidfile.OpenForChild`, `(*Cluster).Start`, `multi/`, `exec.Cmd`\n"
	table := "| `waiter` | waiting | nothing |\n| `nosuch` | x | nothing |\n| `multi` | x | `internal/celery`, `internal/cgroup`, `internal/fdwait`, `internal/launch`, `internal/pin`, `internal/proc`, `internal/ready`, `internal/record`, `internal/runtag`, `internal/safefs`, `internal/supervise`, `nodes`, `nodes/pidfile`, `waiter` |\n"
	if errs := checkImports(d, table); len(errs) != 2 {
		t.Errorf("a table with waiter importing nothing and a package that does not exist: %v, want 2 errors", errs)
	}
	if errs := checkDoc(d, good); len(errs) != 0 {
		t.Errorf("a page naming what exists: %v", errs)
	}
}
