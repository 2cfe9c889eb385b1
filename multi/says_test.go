//go:build unix

package multi_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// What a start's Result says, as fields a program reads: how a node that
// exited ended (Exit), what its readiness check came to (Ready), what
// holds its tree (Containment); a missing program matches
// exec.ErrNotFound as os/exec's callers test it.
func TestStartResultSays(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	c := cluster(t, "", "up", "gone", "unready", "missing", "never")
	c.ReadyTimeout = time.Second // for never, whose check never passes
	c.Nodes[0].Command = []string{"sh", "-c", "touch " + ready + "; exec sleep 300"}
	c.Nodes[0].Ready = nodes.ReadyCheck{Kind: nodes.File, Target: ready}
	c.Nodes[1].Command = []string{"sh", "-c", "exit 3"}
	c.Nodes[2].Command = []string{"sh", "-c", "read x; exit 4"} // its stdin is /dev/null
	c.Nodes[2].Ready = nodes.ReadyCheck{Kind: nodes.File, Target: filepath.Join(dir, "never")}
	c.Nodes[3].Command = []string{"surely-not-a-program-here"}
	c.Nodes[4].Ready = nodes.ReadyCheck{Kind: nodes.File, Target: filepath.Join(dir, "never")}
	res, _ := c.Start(ctx)
	t.Cleanup(func() { c.Kill(context.Background(), multi.StopOptions{}) })

	if r := res[0]; r.Outcome != multi.Started || r.Ready != multi.Ready || r.Exit != nil ||
		r.Containment != containmentOf(r.Node) {
		t.Errorf("up: %+v; want started, ready, in %s", r, containmentOf(r.Node))
	}
	if r := res[1]; !errors.Is(r.Err, multi.ErrExitedAtOnce) || r.Exit == nil || r.Exit.Code != 3 || r.Ready != "" {
		t.Errorf("gone: %+v (exit %+v); want ErrExitedAtOnce with exit code 3 in Exit", r, r.Exit)
	}
	// It exits before its check passes: seen in the readiness wait
	// (ErrNotReady), or at once by the start.
	if r := res[2]; !errors.Is(r.Err, multi.ErrNotReady) && !errors.Is(r.Err, multi.ErrExitedAtOnce) || r.Exit == nil || r.Exit.Code != 4 || r.Ready != multi.Unready {
		t.Errorf("unready: %+v (exit %+v); want ErrNotReady or ErrExitedAtOnce, unready, with exit code 4 in Exit", r, r.Exit)
	}
	if r := res[3]; !errors.Is(r.Err, multi.ErrCommandNotFound) || !errors.Is(r.Err, exec.ErrNotFound) {
		t.Errorf("missing: %v; want ErrCommandNotFound and exec.ErrNotFound", r.Err)
	}
	// It ran, and was stopped not ready: it keeps its record, without a
	// process, so that it is a node that is down, not an unknown name.
	if r := res[4]; !errors.Is(r.Err, multi.ErrNotReady) || r.Ready != multi.Unready {
		t.Errorf("never: %+v; want ErrNotReady, unready", r)
	}
	if n, st, err := record.ReadStarted(c.RunDir, "never"); err != nil || st.PID != 0 || n.Ready.Kind != nodes.File {
		t.Errorf("never's record after its failed readiness check: %+v, %+v, %v; want it, without a process", n, st, err)
	}
	if _, err := record.Read(c.RunDir, "missing"); err == nil {
		t.Error("missing, which never ran, was recorded")
	}
}

// containmentOf is what holds n's tree, as its start put it.
func containmentOf(n nodes.Node) multi.Containment {
	if n.Cgroup != "" {
		return multi.InCgroup
	}
	return multi.InSession
}

// A start cancelled while it waits for a node's readiness check does not
// report it started: the node fails with ctx's error, is left running
// and recorded (Ready: starting), and a stop finds it.
func TestStartCancelledInReadyWait(t *testing.T) {
	t.Parallel()
	c := cluster(t, "", "w1")
	c.Nodes[0].Ready = nodes.ReadyCheck{Kind: nodes.File, Target: filepath.Join(t.TempDir(), "never")}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan []multi.Result, 1)
	go func() {
		res, _ := c.Start(ctx)
		done <- res
	}()
	testutil.PollUntil(t, "w1 to hold its lock", func() bool {
		info, err := pidfile.Inspect(c.Nodes[0].PidFile)
		return err == nil && info.State == pidfile.Running
	})
	cancel()
	r := (<-done)[0]
	if r.Outcome != multi.Failed || !errors.Is(r.Err, context.Canceled) || r.Ready != multi.Starting || r.PID <= 1 {
		t.Fatalf("w1: %+v; want failed with context.Canceled, starting, its pid", r)
	}
	if holderOf(t, c.Nodes[0]) != r.PID {
		t.Errorf("w1's lock holder is not pid %d, the node left running", r.PID)
	}
	res, err := c.StopWait(t.Context(), multi.StopOptions{})
	if err != nil || res[0].Outcome != multi.Stopped || res[0].PID != r.PID {
		t.Errorf("stopwait of the node left running: %+v, %v; want it stopped", res[0], err)
	}
}

// A node whose notify socket is removed before it says READY=1 can never
// say it: the start fails at once with ErrNotifySocketGone, not at the
// ready timeout, and leaves nothing running.
func TestStartNotifySocketGone(t *testing.T) {
	t.Parallel()
	c := cluster(t, "", "w1")
	// Without the check, the start would fail only at the ready timeout,
	// with ErrNotReady alone.
	c.ReadyTimeout = 5 * time.Second
	c.Nodes[0].Command = []string{"sh", "-c", `rm -f "$NOTIFY_SOCKET"; exec sleep 300`}
	c.Nodes[0].Ready = nodes.ReadyCheck{Kind: nodes.Notify}
	res, err := c.Start(t.Context())
	if !errors.Is(err, multi.ErrNotifySocketGone) || res[0].Outcome != multi.Failed {
		t.Fatalf("w1: %+v, %v; want ErrNotifySocketGone", res[0], err)
	}
	if info, err := pidfile.Inspect(c.Nodes[0].PidFile); err != nil || info.State == pidfile.Running {
		t.Errorf("w1 after its failed start: %+v, %v; want nothing running", info, err)
	}
}
