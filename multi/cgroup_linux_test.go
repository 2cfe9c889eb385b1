package multi

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

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
