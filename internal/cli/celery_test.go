package cli_test

// Ports of celery's own parser and expansion tests (celery
// t/unit/apps/test_multi.py, and t/unit/bin/test_multi.py as it last stood
// in full), with the expectations changed only where multi fixes celery;
// each change says why. celery's tests patch gethostname to example.com or
// e.com; these set the host part instead. celery appends worker-only
// defaults to every node's argv (-n NAME, --pidfile, --logfile,
// --executable, an empty passthrough word); multi runs any command and
// appends only the options given, so those are not expected here.

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/internal/cli"
	"github.com/multi-launcher/multi/nodes"
)

// parser is the CLI's parser for start: multi's own flags, signals refused,
// other options forwarded.
var parser = cli.Parser{
	Flags: map[string]bool{"pidfile": true, "logfile": true, "rundir": true, "prefix": true, "suffix": true,
		"hostname": true, "range-prefix": true},
	PerNode: map[string]bool{"pidfile": true, "logfile": true},
	Forward: true,
}

// build parses args as the CLI does and expands the nodes with host part
// host and command cmd.
func build(t *testing.T, host string, cmd []string, args ...string) ([]nodes.Node, error) {
	t.Helper()
	a, err := parser.Parse(args)
	if err != nil {
		return nil, err
	}
	if a.HasCommand {
		cmd = a.Command
	}
	if a.Flag("suffix") != "" {
		host = a.Flag("suffix")
	}
	return nodes.Spec{Names: a.Names, Host: host, Prefix: a.Flag("prefix"), RangePrefix: a.Flag("range-prefix"),
		RunDir: "/run/x", PidFile: a.Flag("pidfile"), LogFile: a.Flag("logfile"), NodeFiles: a.NodeFlags,
		Options: a.Options, Command: cmd}.Nodes()
}

func mustBuild(t *testing.T, host string, cmd []string, args ...string) []nodes.Node {
	t.Helper()
	ns, err := build(t, host, cmd, args...)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return ns
}

func fullNames(ns []nodes.Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.FullName())
	}
	return out
}

// test_NamespacedOptionParser.test_parse, first case.
func TestCeleryNamespacedSimple(t *testing.T) {
	t.Parallel()
	a, err := parser.Parse([]string{"-c:1,3", "4"})
	if err != nil {
		t.Fatal(err)
	}
	want := []nodes.Option{{Name: "-c", Value: "4", HasValue: true, Scope: "1,3"}}
	if !reflect.DeepEqual(a.Options, want) {
		t.Errorf("options %+v; want %+v", a.Options, want)
	}
}

// test_NamespacedOptionParser.test_parse, second case.
func TestCeleryNamespacedFull(t *testing.T) {
	t.Parallel()
	a, err := parser.Parse([]string{"-c:jerry,elaine", "5", "--loglevel:kramer=DEBUG", "--flag",
		"--logfile=foo", "-Q", "bar", "a", "b", "--", ".disable_rate_limits=1"})
	if err != nil {
		t.Fatal(err)
	}
	// Fixed: celery lets -Q take "bar" although it stands before the node
	// names, the same rule that makes "-E w1 w2" lose w1. multi gives an
	// option before the names no separate value, so bar is a node name.
	if want := []string{"bar", "a", "b"}; !reflect.DeepEqual(a.Names, want) {
		t.Errorf("names %q; want %q", a.Names, want)
	}
	// --logfile is multi's own flag (celery also consumes it, as a worker
	// default); the rest go to the command.
	if a.Flag("logfile") != "foo" {
		t.Errorf("logfile %q", a.Flag("logfile"))
	}
	want := []nodes.Option{
		{Name: "-c", Value: "5", HasValue: true, Scope: "jerry,elaine"},
		{Name: "--loglevel", Value: "DEBUG", HasValue: true, Scope: "kramer"},
		{Name: "--flag"},
		{Name: "-Q"},
	}
	if !reflect.DeepEqual(a.Options, want) {
		t.Errorf("options %+v; want %+v", a.Options, want)
	}
	// celery's "--" passthrough is appended to the worker's argv; in multi
	// what follows "--" is the command itself, kept word for word.
	if want := []string{".disable_rate_limits=1"}; !reflect.DeepEqual(a.Command, want) {
		t.Errorf("command %q; want %q", a.Command, want)
	}

	// Written the way celery meant it, with -Q after the names, bar is
	// -Q's value.
	a, _ = parser.Parse([]string{"a", "b", "-Q", "bar"})
	if !reflect.DeepEqual(a.Names, []string{"a", "b"}) || a.Options[0] != (nodes.Option{Name: "-Q", Value: "bar", HasValue: true}) {
		t.Errorf("names-first form: %+v", a)
	}
}

// test_multi_args.test_parse.
func TestCeleryMultiArgs(t *testing.T) {
	t.Parallel()
	cmd := []string{"COMMAND"}
	// Fixed: the celery test gives -Q bar before the names (see above);
	// here it stands after them so that bar stays -Q's value.
	ns := mustBuild(t, "*S*", cmd, "--prefix=*P*", "-c:jerry,elaine", "5", "--loglevel:kramer=DEBUG",
		"--logfile=/var/log/celery/foo", "jerry", "elaine", "kramer", "--flag", "-Q", "bar")
	want := map[string][]string{
		"*P*jerry@*S*":  {"COMMAND", "--flag", "-Q", "bar", "-c", "5"},
		"*P*elaine@*S*": {"COMMAND", "--flag", "-Q", "bar", "-c", "5"},
		"*P*kramer@*S*": {"COMMAND", "--flag", "-Q", "bar", "--loglevel=DEBUG"},
	}
	for _, n := range ns {
		if !reflect.DeepEqual(n.Command, want[n.FullName()]) {
			t.Errorf("%s: %q; want %q", n.FullName(), n.Command, want[n.FullName()])
		}
		// celery expands --logfile without %n to the same file for every
		// node; multi refuses only pidfiles shared between nodes.
		if n.LogFile != "/var/log/celery/foo" {
			t.Errorf("%s: logfile %s", n.Name, n.LogFile)
		}
	}
	if got, _ := nodes.Expand("%h", ns[0]); got != "*P*jerry@*S*" {
		t.Errorf("%%h = %q", got)
	}
	if got, _ := nodes.Expand("%n", ns[0]); got != "*P*jerry" {
		t.Errorf("%%n = %q", got)
	}

	// ['10', '-c:1', '5']: ten counted nodes, the first with -c 5.
	ns = mustBuild(t, "example.com", cmd, "10", "-c:1", "5")
	if len(ns) != 10 || ns[0].FullName() != "celery1@example.com" || !reflect.DeepEqual(ns[0].Command, []string{"COMMAND", "-c", "5"}) {
		t.Errorf("count: %+v", ns[0])
	}
	for i, n := range ns[1:] {
		if n.FullName() != "celery"+strconv.Itoa(i+2)+"@example.com" || !reflect.DeepEqual(n.Command, cmd) {
			t.Errorf("count node %d: %s %q", i+2, n.FullName(), n.Command)
		}
	}
	// The pidfile default is the rundir's, not celery's /var/run/celery.
	if ns[0].PidFile != "/run/x/celery1.pid" {
		t.Errorf("pidfile %s", ns[0].PidFile)
	}

	// suffix '""': an empty host part.
	ns = mustBuild(t, `""`, cmd, "10", "-c:1", "5")
	if ns[0].FullName() != "celery1@" {
		t.Errorf("empty suffix: %s", ns[0].FullName())
	}
	// ['foo@', '-c:foo', '5'].
	ns = mustBuild(t, `""`, cmd, "foo@", "-c:foo", "5")
	if ns[0].FullName() != "foo@" || !reflect.DeepEqual(ns[0].Command, []string{"COMMAND", "-c", "5"}) {
		t.Errorf("foo@: %s %q", ns[0].FullName(), ns[0].Command)
	}
	// ['foo', '-Q:1', 'test'].
	ns = mustBuild(t, `""`, cmd, "foo", "-Q:1", "test")
	if ns[0].FullName() != "foo@" || !reflect.DeepEqual(ns[0].Command, []string{"COMMAND", "-Q", "test"}) {
		t.Errorf("foo: %s %q", ns[0].FullName(), ns[0].Command)
	}
	// ['foo@bar', '-Q:1', 'test'].
	ns = mustBuild(t, `""`, cmd, "foo@bar", "-Q:1", "test")
	if ns[0].FullName() != "foo@bar" || ns[0].PidFile != "/run/x/foo.pid" || !reflect.DeepEqual(ns[0].Command, []string{"COMMAND", "-Q", "test"}) {
		t.Errorf("foo@bar: %s %s %q", ns[0].FullName(), ns[0].PidFile, ns[0].Command)
	}
	// ['foo@bar', '-Q:0', 'test']: celery raises KeyError (printed as
	// "Invalid command"); multi says what is wrong.
	if _, err := build(t, "", cmd, "foo@bar", "-Q:0", "test"); !errors.Is(err, nodes.ErrBadScope) || !strings.Contains(err.Error(), "-Q:0") {
		t.Errorf("-Q:0: %v; want ErrBadScope naming -Q:0", err)
	}
}

// test_functions.test_parse_ns_range, through the option scopes.
func TestCeleryRanges(t *testing.T) {
	t.Parallel()
	ns := mustBuild(t, "h", []string{"C"}, "20", "-c:1-3,10,11,20", "7")
	var got []int
	for _, n := range ns {
		if len(n.Command) == 3 {
			got = append(got, n.Index)
		}
	}
	if want := []int{1, 2, 3, 10, 11, 20}; !reflect.DeepEqual(got, want) {
		t.Errorf("indexes with -c: %v; want %v", got, want)
	}
}

// Fixed: celery applies index lists and ranges only to counted nodes; its
// 3.1 changelog promised "multi start A B C D -c:1 4 -c:2-4 8".
func TestRangesForNamedNodes(t *testing.T) {
	t.Parallel()
	ns := mustBuild(t, "h", []string{"worker"}, "A", "B", "C", "D", "-c:1", "4", "-c:2-4", "8")
	want := [][]string{{"worker", "-c", "4"}, {"worker", "-c", "8"}, {"worker", "-c", "8"}, {"worker", "-c", "8"}}
	for i, n := range ns {
		if !reflect.DeepEqual(n.Command, want[i]) {
			t.Errorf("%s: %q; want %q", n.Name, n.Command, want[i])
		}
	}
}

// From the celery reference: per-node values replace the global value in
// its place, per-node-only options come after, later globals win.
func TestOptionMerge(t *testing.T) {
	t.Parallel()
	ns := mustBuild(t, "h", []string{"w"}, "2", "-c", "5", "-c:1", "3", "-c", "7", "--loglevel=INFO", "--loglevel:2=DEBUG", "-Ofair")
	if want := []string{"w", "-c", "3", "--loglevel=INFO", "-Ofair"}; !reflect.DeepEqual(ns[0].Command, want) {
		t.Errorf("node 1: %q; want %q", ns[0].Command, want)
	}
	if want := []string{"w", "-c", "7", "--loglevel=DEBUG", "-Ofair"}; !reflect.DeepEqual(ns[1].Command, want) {
		t.Errorf("node 2: %q; want %q", ns[1].Command, want)
	}
	// Scopes by short name, by the name before its prefix, by full name.
	ns = mustBuild(t, "h", []string{"w"}, "--prefix=p-", "img", "web", "-c:p-img", "1", "-c:img", "2", "-c:p-web@h", "3")
	if ns[0].Command[2] != "2" || ns[1].Command[2] != "3" {
		t.Errorf("named scopes: %q %q", ns[0].Command, ns[1].Command)
	}
	// Option values are expanded per node.
	ns = mustBuild(t, "h", []string{"w"}, "w1", "w2", "--statedb=/x/%n.state", "-p", "80%i")
	if want := []string{"w", "--statedb=/x/w2.state", "-p", "802"}; !reflect.DeepEqual(ns[1].Command, want) {
		t.Errorf("expanded values: %q; want %q", ns[1].Command, want)
	}
}

// The grammar's errors are usage errors that name the bad token.
func TestGrammarErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want error
		text string
	}{
		{[]string{"w1", "w2", "-c:3", "1"}, nodes.ErrBadScope, "index 3 out of range 1-2 in -c:3"},
		{[]string{"w1", "-c:0", "1"}, nodes.ErrBadScope, "index 0 below 1"},
		{[]string{"w1", "w2", "-c:2-1", "1"}, nodes.ErrBadScope, "range 2-1 runs backwards"},
		{[]string{"w1", "-c:zzz", "1"}, nodes.ErrBadScope, `no node "zzz" in -c:zzz`},
		{[]string{"w1", "-c:w1,", "1"}, nodes.ErrBadScope, "empty entry"},
		{[]string{"w1", "w1"}, nodes.ErrDuplicateName, `"w1"`},
		{[]string{"w1", "--pidfile=/x/%y.pid"}, nodes.ErrBadTemplate, "%y"},
		{[]string{"w1", "--pidfile=/x/%n/../../y.pid"}, nodes.ErrBadTemplate, "'..'"},
		{[]string{"a/b"}, nodes.ErrBadName, `"a/b"`},
		{[]string{".."}, nodes.ErrBadName, `".."`},
		{[]string{"w1@a/b"}, nodes.ErrBadName, `"a/b"`},
		{[]string{"w1", "--suffix=.."}, nodes.ErrBadName, `".."`},
		{[]string{"w1", "--prefix=x/"}, nodes.ErrBadName, `"x/w1"`},
		{[]string{"w%q"}, nodes.ErrBadTemplate, "%q"},
		{[]string{"0"}, nodes.ErrBadName, `"0"`},
		{[]string{"w1", "w2", "-c", "3", "w3"}, cli.ErrUsage, `"w3" after the options`},
		{[]string{"-"}, cli.ErrUsage, "lone '-'"},
		{[]string{"w1", "-c:1"}, cli.ErrUsage, "-c:1 needs a value"},
		{[]string{"w1", "--rundir:1=/x"}, cli.ErrUsage, "--rundir cannot be given per node"},
	}
	for _, tt := range tests {
		_, err := build(t, "h", []string{"c"}, tt.args...)
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.text) {
			t.Errorf("%q: %v; want %v containing %q", tt.args, err, tt.want, tt.text)
		}
	}
}

// Fixed: celery's "show -E w1 w2" yields one node, w2, with "-E w1".
func TestFlagNeverSwallowsName(t *testing.T) {
	t.Parallel()
	ns := mustBuild(t, "h", []string{"c"}, "-E", "w1", "w2")
	if got := fullNames(ns); !reflect.DeepEqual(got, []string{"w1@h", "w2@h"}) || !reflect.DeepEqual(ns[0].Command, []string{"c", "-E"}) {
		t.Errorf("-E w1 w2: %v %q", got, ns[0].Command)
	}
	// multi's own flags take their value wherever they stand.
	ns = mustBuild(t, "h", nil, "--pidfile", "/p/%n.pid", "w1", "--logfile", "/l/%n.log", "w2")
	if got := fullNames(ns); !reflect.DeepEqual(got, []string{"w1@h", "w2@h"}) || ns[1].PidFile != "/p/w2.pid" || ns[1].LogFile != "/l/w2.log" {
		t.Errorf("own flags between names: %v %+v", got, ns[1])
	}
}

// Names, prefixes and hosts expand this machine's host name as celery's
// host_format does.
func TestHostFormat(t *testing.T) {
	t.Parallel()
	h := nodes.Hostname()
	short, domain, _ := strings.Cut(h, ".")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"foo@%h"}, "foo@" + h},
		{[]string{"foo@%n"}, "foo@" + short},
		{[]string{"bar@%d"}, "bar@" + domain},
		{[]string{"w1@%i"}, "w1@0"},
		{[]string{"w1", "--suffix=%h.local"}, "w1@" + h + ".local"},
		{[]string{"w1", "--prefix=%n-"}, short + "-w1@" + h},
		{[]string{"w1", `--suffix=""`}, "w1@"},
		{[]string{"w1", "--suffix=''"}, "w1@"},
		// --prefix is ignored for counted nodes, as in celery.
		{[]string{"1", "--prefix=x", "--range-prefix=worker"}, "worker1@" + h},
		// A name that only looks like a range is a name.
		{[]string{"1-3"}, "1-3@" + h},
	}
	for _, tt := range tests {
		ns := mustBuild(t, "", nil, tt.args...)
		if got := ns[0].FullName(); got != tt.want {
			t.Errorf("%q: %s; want %s", tt.args, got, tt.want)
		}
	}
}

// Per-node pidfile and logfile templates, as celery's --pidfile:1=.
func TestPerNodeFiles(t *testing.T) {
	t.Parallel()
	ns := mustBuild(t, "h", nil, "w1", "w2", "--pidfile=/p/%n.pid", "--pidfile:2=/q/two.pid", "--logfile:w1=/l/one.log")
	if ns[0].PidFile != "/p/w1.pid" || ns[1].PidFile != "/q/two.pid" || ns[0].LogFile != "/l/one.log" || ns[1].LogFile != "/run/x/w2.log" {
		t.Errorf("per-node files: %+v", ns)
	}
}
