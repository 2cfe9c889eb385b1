package nodes_test

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/nodes"
)

// A Spec's zero fields take the documented defaults: names from a count
// take DefaultRangePrefix, the host part is this machine's (Hostname),
// the files go in DefaultRunDir, and a node not resolved from its record
// names no recorded process.
func TestSpecDefaults(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("MULTI_RUNDIR", dir)
	if got := nodes.DefaultRunDir(); got != dir {
		t.Fatalf("DefaultRunDir with $MULTI_RUNDIR=%s: %s", dir, got)
	}
	ns, err := nodes.Spec{Names: []string{"2"}, Command: []string{"app"}}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range ns {
		if want := nodes.DefaultRangePrefix + strconv.Itoa(i+1); n.Name != want {
			t.Errorf("node %d is named %s; want %s", i, n.Name, want)
		}
		if n.Host != nodes.Hostname() {
			t.Errorf("%s: host %q; want this machine's, %q", n, n.Host, nodes.Hostname())
		}
		if want := filepath.Join(dir, n.Name+".pid"); n.PidFile != want {
			t.Errorf("%s: pidfile %s; want %s", n, n.PidFile, want)
		}
		if n.Recorded != (nodes.Started{}) {
			t.Errorf("%s: recorded process %+v; want none from Spec.Nodes", n, n.Recorded)
		}
	}
}

// A node's program finds its name in the environment under EnvNode.
func TestEnvNode(t *testing.T) {
	if nodes.EnvNode != "MULTI_NODE" {
		t.Errorf("EnvNode = %q; want MULTI_NODE, which node programs read", nodes.EnvNode)
	}
}

// A check template expands per node (ExpandReady), its ADDRESS:PORT
// splits (SplitHostPort), a bad one is an ErrBadReady naming the option,
// and ReadyKinds lists every kind.
func TestReadyCheckAsALibraryReadsIt(t *testing.T) {
	t.Parallel()
	n := nodes.Node{Name: "w1", Host: "h", Index: 2}
	c, err := nodes.ExpandReady("tcp:127.0.0.1:80%i", n, "--ready")
	if err != nil || c.Kind != nodes.TCP || c.Target != "127.0.0.1:802" {
		t.Fatalf("ExpandReady: %+v, %v; want tcp 127.0.0.1:802", c, err)
	}
	if host, port, err := nodes.SplitHostPort(c.Target); host != "127.0.0.1" || port != 802 || err != nil {
		t.Errorf("SplitHostPort(%q) = %q, %d, %v", c.Target, host, port, err)
	}
	if _, err := nodes.ExpandReady("tcp:nowhere", n, "--live"); !errors.Is(err, nodes.ErrBadReady) || !strings.Contains(err.Error(), "--live") {
		t.Errorf("ExpandReady of a bad check: %v; want ErrBadReady naming --live", err)
	}
	for _, k := range []nodes.ReadyKind{nodes.TCP, nodes.HTTP, nodes.Exec, nodes.File, nodes.Log, nodes.Notify, nodes.FD} {
		if !strings.Contains(nodes.ReadyKinds, string(k)) {
			t.Errorf("ReadyKinds %q lacks %s", nodes.ReadyKinds, k)
		}
	}
}
