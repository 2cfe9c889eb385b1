//go:build unix

package multi_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

func locked(n nodes.Node) bool {
	info, err := pidfile.Inspect(n.PidFile)
	return err == nil && info.State == pidfile.Running
}

// A rolling restart of 10 nodes never has two down at once: when each node
// is signalled, every other node holds its lock. The hook also waits until
// the signalled node has released its lock, so that a restart that
// signals the next node before this one is up again is caught for sure.
func TestRestartRollingOneDownAtATime(t *testing.T) {
	t.Parallel()
	names := make([]string, 10)
	for i := range names {
		names[i] = fmt.Sprintf("r%d", i+1)
	}
	c := cluster(t, "", names...)
	c.Settle = 50 * time.Millisecond
	if _, err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	old := map[string]int{}
	for _, n := range c.Nodes {
		old[n.Name] = holderOf(t, n)
	}
	signalled := 0
	signalledFn := func(r multi.Result) {
		signalled++
		for _, n := range c.Nodes {
			if n.Name != r.Node.Name && !locked(n) {
				t.Errorf("%s signalled while %s is down", r.Node.Name, n.Name)
			}
		}
		pollUntil(t, r.Node.Name+" to release its lock", func() bool { return !locked(r.Node) })
	}
	res, err := c.Restart(t.Context(), multi.RestartOptions{Rolling: true, Stop: multi.StopOptions{Signalled: signalledFn}})
	if err != nil {
		t.Fatal(err)
	}
	if signalled != len(names) {
		t.Errorf("%d nodes signalled; want %d", signalled, len(names))
	}
	for i, n := range c.Nodes {
		now := holderOf(t, n)
		if now == old[n.Name] || res[i].Outcome != multi.Restarted || res[i].PID != now || res[i].OldPID != old[n.Name] {
			t.Errorf("%s: %q (old pid %d, now %d)", n.Name, res[i], old[n.Name], now)
		}
	}
}

// Without Rolling, a node is started again the moment it is down, while
// another still runs: w2 is reported restarted while w1, which ignores
// SIGTERM, still holds its lock; only then is w1 killed.
func TestRestartStartsEachWhenDown(t *testing.T) {
	t.Parallel()
	c := cluster(t, "ignore-term", "w1", "w2")
	c.Nodes[1].Command = []string{"sleep", "300"}
	if _, err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitUp(t, c.Nodes[0])
	w1 := holderOf(t, c.Nodes[0])
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	c.Progress = func(r multi.Result) {
		mu.Lock()
		defer mu.Unlock()
		if r.Node.Name != "w2" {
			return
		}
		if r.Err != nil || !locked(c.Nodes[0]) {
			t.Errorf("w2 %q; w1 locked: %v; want w2 restarted while w1 still runs", r, locked(c.Nodes[0]))
		}
		syscall.Kill(w1, syscall.SIGKILL)
	}
	res, err := c.Restart(ctx, multi.RestartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Outcome != multi.Restarted || r.PID != holderOf(t, c.Nodes[i]) {
			t.Errorf("%s: %q", r.Node.Name, r)
		}
	}
}

// A restart whose program has gone leaves the running node as it was,
// same pid, and fails naming the program.
func TestRestartProgramGoneLeavesNodeRunning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	prog := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\nexec sleep 300\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := cluster(t, "", "g1", "g2")
	for i := range c.Nodes {
		c.Nodes[i].Command = []string{"./run.sh"}
		c.Nodes[i].Dir = dir
	}
	if _, err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	before := []int{holderOf(t, c.Nodes[0]), holderOf(t, c.Nodes[1])}
	if err := os.Remove(prog); err != nil {
		t.Fatal(err)
	}
	res, err := c.Restart(t.Context(), multi.RestartOptions{})
	if !errors.Is(err, multi.ErrCannotRestart) || !errors.Is(err, multi.ErrCommandNotFound) {
		t.Fatalf("Restart: %v; want errCannotRestart and launch.ErrCommandNotFound", err)
	}
	for i, n := range c.Nodes {
		if now := holderOf(t, n); now != before[i] {
			t.Errorf("%s: pid %d, was %d: the node was restarted", n.Name, now, before[i])
		}
		if !errors.Is(res[i].Err, multi.ErrCannotRestart) {
			t.Errorf("%s: %q; want errCannotRestart", n.Name, res[i])
		}
	}
}

// A restart that gives a running node a command that exits at once starts
// the node again as it was: b1 runs its old command under a new pid, the
// result fails with the new command's exit, and each node is reported
// once; b2, unchanged, is just restarted.
func TestRestartBadCommandStartsOldAgain(t *testing.T) {
	t.Parallel()
	c := cluster(t, "", "b1", "b2")
	c.Settle = 200 * time.Millisecond
	if _, err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	old := holderOf(t, c.Nodes[0])
	c.Nodes[0].Command = []string{"sh", "-c", "exit 3"}
	var mu sync.Mutex
	reported := map[string]int{}
	c.Progress = func(r multi.Result) {
		mu.Lock()
		defer mu.Unlock()
		reported[r.Node.Name]++
	}
	res, err := c.Restart(t.Context(), multi.RestartOptions{})
	if !errors.Is(err, multi.ErrExitedAtOnce) {
		t.Fatalf("Restart: %v; want ErrExitedAtOnce", err)
	}
	r := res[0]
	now := holderOf(t, c.Nodes[0])
	if r.Outcome != multi.Failed || r.Exit == nil || r.Exit.Code != 3 || now == old || r.PID != now || r.OldPID != old {
		t.Errorf("b1: %q (exit %+v, pid %d, old %d, holder %d); want failed with exit 3, running again under a new pid", r, r.Exit, r.PID, r.OldPID, now)
	}
	if got := r.Err.Error(); !strings.Contains(got, "its old command started again") {
		t.Errorf("b1: %q; want it to say the node was started again as it was", got)
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", now)); err == nil && string(b) != "sleep\x00300\x00" {
		t.Errorf("b1 runs %q; want its old command, sleep 300", b)
	}
	if res[1].Outcome != multi.Restarted {
		t.Errorf("b2: %q; want restarted", res[1])
	}
	if reported["b1"] != 1 || reported["b2"] != 1 {
		t.Errorf("reported %v; want each node once", reported)
	}
}
