package nodes_test

import (
	"errors"
	"testing"

	"github.com/multi-launcher/multi/nodes"
)

// Two Specs joined give their nodes different commands, and the second
// Spec's nodes continue the index: %i, a count's names and Scope indexes
// never repeat one of the first Spec's.
func TestJoin(t *testing.T) {
	t.Parallel()
	web := nodes.Spec{
		Names:   []string{"web1", "web2"},
		Host:    "h",
		RunDir:  "/run/app",
		Command: []string{"web", "--port=80%i"},
	}
	work := nodes.Spec{
		Names:   []string{"2"},
		Host:    "h",
		RunDir:  "/run/app",
		PidFile: "/run/app/worker%i.pid",
		Command: []string{"worker", "--id=%i"},
		Options: []nodes.Option{{Name: "-c", Value: "%i", HasValue: true, Scope: "4"}},
	}
	ns, err := nodes.Join(web, work)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name, pidfile string
		index         int
		command       string
	}{
		{"web1", "/run/app/web1.pid", 1, "web --port=801"},
		{"web2", "/run/app/web2.pid", 2, "web --port=802"},
		{"celery3", "/run/app/worker3.pid", 3, "worker --id=3"},
		{"celery4", "/run/app/worker4.pid", 4, "worker --id=4 -c 4"},
	}
	if len(ns) != len(want) {
		t.Fatalf("%d nodes: %v; want %d", len(ns), ns, len(want))
	}
	for i, w := range want {
		n := ns[i]
		if n.Name != w.name || n.PidFile != w.pidfile || n.Index != w.index || nodes.Quote(n.Command) != w.command {
			t.Errorf("node %d: %s %s %d %q; want %s %s %d %q", i, n.Name, n.PidFile, n.Index, nodes.Quote(n.Command), w.name, w.pidfile, w.index, w.command)
		}
	}

	// One Spec alone still starts at 1.
	alone, err := work.Nodes()
	if err == nil {
		t.Fatalf("Nodes with Scope 4 of two nodes: %v; want ErrBadScope", alone)
	} else if !errors.Is(err, nodes.ErrBadScope) {
		t.Fatalf("%v; want ErrBadScope", err)
	}

	bad := []struct {
		what  string
		specs []nodes.Spec
		want  error
	}{
		{"a name twice", []nodes.Spec{{Names: []string{"w1"}}, {Names: []string{"w2", "w1"}}}, nodes.ErrDuplicateName},
		{"a pidfile twice", []nodes.Spec{{Names: []string{"w1"}, PidFile: "/r/x.pid"}, {Names: []string{"w2"}, PidFile: "/r/x.pid"}}, nodes.ErrBadTemplate},
		{"a Scope index of the Spec before", []nodes.Spec{{Names: []string{"w1"}}, {Names: []string{"w2"}, Options: []nodes.Option{{Name: "-v", Scope: "1"}}}}, nodes.ErrBadScope},
		{"no nodes", nil, nodes.ErrNoNodes},
		{"a Spec without nodes", []nodes.Spec{{Names: []string{"w1"}}, {}}, nodes.ErrNoNodes},
	}
	for _, b := range bad {
		for i := range b.specs {
			b.specs[i].RunDir = "/r"
		}
		if ns, err := nodes.Join(b.specs...); !errors.Is(err, b.want) {
			t.Errorf("%s: %v, %v; want %v", b.what, ns, err, b.want)
		}
	}
}
