package multi_test

import (
	"errors"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// A start beside what a node's last run left (its master killed, its
// child running on in its tree) is refused with a *multi.LingeringError
// naming what is left; Cluster.Clean, or a stopwait, kills it.
func TestStartRefusesLingering(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	kid := filepath.Join(t.TempDir(), "kid")
	c := cluster(t, "", "w1")
	c.Nodes[0].Command = []string{"sh", "-c", `sleep 300 & echo $! > "$0"; exec sleep 301`, kid}
	res, err := c.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pid := testutil.ReadPID(t, kid)
	testutil.KillAtCleanup(t, pid)
	if err := syscall.Kill(res[0].PID, syscall.SIGKILL); err != nil { // its master, not its tree
		t.Fatal(err)
	}
	testutil.PollUntil(t, "w1's lock to be free", func() bool {
		info, err := pidfile.Inspect(c.Nodes[0].PidFile)
		return err == nil && info.State != pidfile.Running
	})
	sts, _ := c.Status(ctx)
	if sts[0].State != multi.StateLingering || !sts[0].Tree.Lingering {
		t.Fatalf("status: %+v; want lingering", sts[0])
	}
	_, err = c.Start(ctx)
	var le *multi.LingeringError
	if !errors.As(err, &le) || !errors.Is(err, multi.ErrLingering) || !slices.Contains(le.Procs, pid) {
		t.Fatalf("start beside the leftover: %v; want a *multi.LingeringError naming pid %d", err, pid)
	}
	res, err = c.StopWait(ctx, multi.StopOptions{})
	if err != nil || res[0].Outcome != multi.Killed || res[0].Lingering < 1 {
		t.Errorf("stopwait of the lingering node: %+v, %v; want its leftover killed", res[0], err)
	}
}
