//go:build unix

package multi_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// Every verb's error is one a caller reads with errors.As into the types
// package multi documents: a lost node (its process runs on without its
// lock) makes each verb fail with a *multi.LostError naming it, inside a
// *multi.NodeError naming the node and the verb.
func TestErrorsAsFromEveryVerb(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	drop := filepath.Join(t.TempDir(), "drop")
	c := cluster(t, "", "w1")
	// It closes its lock's descriptor once told, and runs on: lost.
	c.Nodes[0].Command = []string{"sh", "-c", `while [ ! -e "$0" ]; do sleep 0.01; done; eval "exec $MULTI_PIDFILE_FD>&-"; exec sleep 300`, drop}
	res, err := c.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pid := res[0].PID
	t.Cleanup(func() { c.Kill(context.Background(), multi.StopOptions{Lost: true}) })
	if err := os.WriteFile(drop, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	testutil.PollUntil(t, "w1 to let go of its lock", func() bool {
		info, err := pidfile.Inspect(c.Nodes[0].PidFile)
		return err == nil && info.State != pidfile.Running
	})
	verbs := map[string]func() ([]multi.Result, error){
		"start":    func() ([]multi.Result, error) { return c.Start(ctx) },
		"stop":     func() ([]multi.Result, error) { return c.Stop(ctx, multi.StopOptions{}) },
		"stopwait": func() ([]multi.Result, error) { return c.StopWait(ctx, multi.StopOptions{}) },
		"kill":     func() ([]multi.Result, error) { return c.Kill(ctx, multi.StopOptions{}) },
		"signal": func() ([]multi.Result, error) {
			return c.Send(ctx, syscall.SIGHUP, multi.StopOptions{})
		},
		"restart": func() ([]multi.Result, error) { return c.Restart(ctx, multi.RestartOptions{}) },
	}
	for op, verb := range verbs {
		res, err := verb()
		var ne *multi.NodeError
		var le *multi.LostError
		if !errors.As(err, &ne) || ne.Node != "w1" || ne.Op != op {
			t.Errorf("%s: %v; want a *multi.NodeError of w1's %s", op, err, op)
		}
		if !errors.As(err, &le) || le.PID != pid || !errors.Is(err, multi.ErrLost) || res[0].Outcome != multi.Lost {
			t.Errorf("%s: %v (%+v); want a *multi.LostError naming pid %d", op, err, res[0], pid)
		}
		if le != nil && le.Start != (op == "start") {
			t.Errorf("%s: LostError.Start %v", op, le.Start)
		}
	}
	if holderOf := testutil.Holder(c.Nodes[0].PidFile); holderOf != 0 {
		t.Errorf("w1's pidfile is held by pid %d", holderOf)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Errorf("the lost process was signalled to death: %v", err)
	}
}
