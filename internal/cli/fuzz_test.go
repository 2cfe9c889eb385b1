package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/nodes"
)

// FuzzGrammar parses fuzzed command lines and pidfile templates as the CLI
// does and checks that nothing panics and that no pidfile lands outside its
// template's folder (the folder written before the first %-letter).
func FuzzGrammar(f *testing.F) {
	f.Add("w1\x00w2\x00-c:1\x005", "/run/x/%n.pid", "")
	f.Add("3\x00--range-prefix=w\x00-Q:1-3,2\x00q", "%n/%d.pid", "")
	f.Add("..\x00w1", "/r/%n.pid", "")
	f.Add("a@..", "/r/%d/x.pid", "%h")
	f.Add("w1", "/r/.%n", ".")
	f.Add("w1\x00--prefix=%h-", "/r/%n%I/%i.pid", "")
	f.Add("x@\x00y@", "/r/%p/../../%d.pid", "")
	f.Fuzz(func(t *testing.T, args, tmpl, host string) {
		if tmpl == "" {
			return
		}
		a, err := parser.Parse(strings.Split(args, "\x00"))
		if err != nil {
			return
		}
		if host == "" {
			host = a.Flag("suffix")
		}
		ns, err := nodes.Spec{Names: a.Names, Host: host, Prefix: a.Flag("prefix"), RangePrefix: a.Flag("range-prefix"),
			RunDir: "/run/x", PidFile: tmpl, Options: a.Options, NodeFiles: nil, Command: []string{"c", "%n"}, Dir: "/base"}.Nodes()
		if err != nil {
			return
		}
		abs := tmpl
		if !filepath.IsAbs(abs) {
			abs = "/base/" + abs
		}
		folder := filepath.Dir(filepath.Clean(abs))
		if i := strings.IndexByte(abs, '%'); i >= 0 {
			folder = filepath.Clean(abs[:strings.LastIndexByte(abs[:i], '/')+1])
		}
		for _, n := range ns {
			rel, err := filepath.Rel(folder, n.PidFile)
			if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || !filepath.IsAbs(n.PidFile) {
				t.Fatalf("node %q: pidfile %q is outside %q (template %q)", n.Name, n.PidFile, folder, tmpl)
			}
		}
	})
}
