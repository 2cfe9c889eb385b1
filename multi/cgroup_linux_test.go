package multi

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/nodes"
)

// TestStopRemovesEmptyCgroup: the empty cgroup folder of a node that
// exited on its own is removed by the next stop of the node, not left
// for its next start; status, which only reads, leaves it.
func TestStopRemovesEmptyCgroup(t *testing.T) {
	testutil.NeedRoot(t)
	dir := t.TempDir()
	gone := filepath.Join(dir, "go")
	ns, err := nodes.Spec{Names: []string{"w1"}, RunDir: dir,
		Command: []string{"sh", "-c", `while [ ! -e "$0" ]; do sleep 0.01; done`, gone}}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Nodes: ns, RunDir: dir, Detach: true, Settle: -1}
	t.Cleanup(func() {
		os.WriteFile(gone, nil, 0o600)
		c.Kill(context.Background(), StopOptions{})
	})
	if _, err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec, err := record.Read(dir, "w1")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Cgroup == "" {
		t.Skip("no cgroup here: the node's containment is session")
	}
	if err := os.WriteFile(gone, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	rc := &Cluster{Nodes: []nodes.Node{rec}, RunDir: dir}
	testutil.PollUntil(t, "w1 gone, its cgroup empty", func() bool {
		sts, _ := rc.Status(context.Background())
		return sts[0].State != StateRunning && sts[0].Tree.Procs == 0
	})
	if _, err := os.Stat(rec.Cgroup); err != nil {
		t.Fatalf("status removed w1's cgroup, or it was never made: %v", err)
	}
	if _, err := rc.Stop(context.Background(), StopOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(rec.Cgroup); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("w1's empty cgroup %s after stop: %v; want it removed", rec.Cgroup, err)
	}
}

// A node's cgroup v2 limit is written into its cgroup before its process
// joins, where the rundir's folder lists the controller; where it does not
// (this machine's memory controller is cgroup v1's), the start fails for
// every node with the reason Available gives, nothing started, and the
// rundir's folder made to look is removed again.
func TestCgroupLimitApplied(t *testing.T) {
	testutil.NeedRoot(t)
	dir := t.TempDir()
	cg := cgroup.Detect(dir)
	if cg.Mode != cgroup.Cgroup {
		t.Skipf("no cgroup here: %s", cg.Why)
	}
	avail := cg.Available("pids")
	cgroup.RemoveParent(cg.Parent)
	ns, err := nodes.Spec{Names: []string{"w1", "w2"}, RunDir: dir, Command: []string{"sleep", "300"},
		Limits: nodes.Limits{PidsMax: "64"}}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Nodes: ns, RunDir: dir, Detach: true}
	t.Cleanup(func() { c.Kill(context.Background(), StopOptions{}) })
	res, err := c.Start(context.Background())
	if avail != nil {
		for _, r := range res {
			if r.Outcome != Failed || !errors.Is(r.Err, ErrLimitUnavailable) || !strings.Contains(r.Err.Error(), avail.Error()) {
				t.Errorf("%q; want FAILED: %v", r, avail)
			}
		}
		for _, n := range ns {
			if _, err := os.Stat(n.PidFile); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s: pidfile %v; want none", n.Name, err)
			}
		}
		if _, err := os.Stat(cg.Parent); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the rundir's cgroup folder %s: %v; want it removed", cg.Parent, err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		b, err := os.ReadFile(filepath.Join(cg.Parent, r.Node.Name, "pids.max"))
		if err != nil || strings.TrimSpace(string(b)) != "64" {
			t.Errorf("%s: pids.max %q, %v; want 64", r.Node.Name, b, err)
		}
	}
}
