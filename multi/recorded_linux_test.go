package multi_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// resolved is c's nodes named names as a later command resolves them:
// from their records, each carrying the process its record named then.
func resolved(t *testing.T, c *multi.Cluster, names ...string) *multi.Cluster {
	t.Helper()
	ns, err := record.Resolve(nodes.Spec{Names: names, RunDir: c.RunDir}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &multi.Cluster{Nodes: ns, RunDir: c.RunDir, Env: c.Env}
}

// TestResolvedHolderMismatch: the holder check holds with the record read
// once, when the nodes were resolved (the record is not read again per
// signal): w2's pidfile renamed over w1's, StopWait of the resolved w1
// fails with ErrHolderMismatch and both sleeps live on.
func TestResolvedHolderMismatch(t *testing.T) {
	c := cluster(t, "", "w1", "w2")
	c.Detach = true
	ctx := context.Background()
	if _, err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	p1, p2 := holderOf(t, c.Nodes[0]), holderOf(t, c.Nodes[1])
	r := resolved(t, c, "w1")
	if got := r.Nodes[0].Recorded; got.PID != p1 {
		t.Fatalf("resolved w1 carries %+v; want pid %d", got, p1)
	}
	alive := pinProcesses(t, p1, p2)
	if err := os.Rename(c.Nodes[1].PidFile, c.Nodes[0].PidFile); err != nil {
		t.Fatal(err)
	}
	_, err := r.StopWait(ctx, multi.StopOptions{})
	var he *pin.HolderError
	if !errors.As(err, &he) || he.PID != p2 || he.Recorded.PID != p1 {
		t.Fatalf("StopWait: %v; want ErrHolderMismatch, holder %d, recorded %d", err, p2, p1)
	}
	checkAlive(t, alive)
}

// TestResolvedRecordStale: a node restarted after its nodes were resolved
// runs as a process the resolved record does not name; the record is read
// again before the holder is called a mismatch, and StopWait stops it.
func TestResolvedRecordStale(t *testing.T) {
	c := cluster(t, "", "w1")
	ctx := context.Background()
	if _, err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	p1 := holderOf(t, c.Nodes[0])
	r := resolved(t, c, "w1")
	if _, err := c.Restart(ctx, multi.RestartOptions{}); err != nil {
		t.Fatal(err)
	}
	if p := holderOf(t, c.Nodes[0]); p == p1 {
		t.Fatalf("restart kept pid %d", p)
	}
	res, err := r.StopWait(ctx, multi.StopOptions{})
	if err != nil || res[0].Outcome != multi.Stopped {
		t.Fatalf("StopWait: %v, %v; want stopped", res, err)
	}
	if info, err := pidfile.Inspect(c.Nodes[0].PidFile); err != nil && !errors.Is(err, os.ErrNotExist) || err == nil && info.State == pidfile.Running {
		t.Errorf("w1 after StopWait: %+v, %v; want not running", info, err)
	}
}
