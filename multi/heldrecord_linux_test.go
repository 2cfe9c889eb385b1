package multi

import (
	"context"
	"os/exec"
	"testing"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// TestHeldRecord: what a start that lost the race for its node's lock
// puts back in the record it rewrote without a process. Never a process
// that is gone over the record of the start that won (else no stop could
// check the winner, and the node could not be stopped by name); never
// anything over a record that names the holder already; the process the
// record named before while it runs (the holder, or the node whose pidfile
// was replaced: holder_swap).
func TestHeldRecord(t *testing.T) {
	dir := t.TempDir()
	ns, err := nodes.Spec{Names: []string{"w1"}, RunDir: dir, Command: []string{"sleep", "300"}}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Nodes: ns, RunDir: dir, Detach: true, Settle: -1}
	if _, err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Kill(context.Background(), StopOptions{}) })
	n := c.Nodes[0]
	info, err := pidfile.Inspect(n.PidFile)
	if err != nil || info.State != pidfile.Running {
		t.Fatalf("w1: %+v, %v; want running", info, err)
	}
	p := info.PID
	_, live, err := record.ReadStarted(c.RunDir, "w1")
	if err != nil || live.PID != p {
		t.Fatalf("w1's record: %+v, %v; want pid %d", live, err, p)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := nodes.Started{PID: gone.Process.Pid, StartTicks: 1, PidfdIno: 1}
	for _, tc := range []struct {
		name    string
		record  nodes.Started // what the record names when the start looks
		prev    nodes.Started
		want    nodes.Started
		wantPut bool
	}{
		{"winner recorded", live, dead, nodes.Started{}, false},
		{"holder was the node", nodes.Started{}, live, live, true},
		{"prev gone, winner not recorded yet", nodes.Started{}, dead, nodes.Started{}, true},
		{"no prev process", nodes.Started{}, nodes.Started{}, nodes.Started{}, true},
	} {
		if err := record.WriteStarted(c.RunDir, n, tc.record); err != nil {
			t.Fatal(err)
		}
		st, put := c.call(StopOptions{}.plan()).heldRecord(n, tc.prev, p)
		if st != tc.want || put != tc.wantPut {
			t.Errorf("%s: %+v, %v; want %+v, %v", tc.name, st, put, tc.want, tc.wantPut)
		}
	}
}
