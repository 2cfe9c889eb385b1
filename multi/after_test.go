//go:build unix

package multi

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/runtag"
	"github.com/multi-launcher/multi/nodes"
)

// A node's work after its lock is released (its cgroup removed, its
// tree looked at) runs off the waiter's loop: while one node's is held
// up, the other node's release is still seen and reported. Run on the
// loop, the first node's work held up every later one (a stop of many
// nodes ended with a backlog of them after the last death).
func TestStopWaitWorkAfterReleaseOffTheLoop(t *testing.T) {
	dir := t.TempDir()
	ns, err := nodes.Spec{Names: []string{"w1", "w2"}, RunDir: dir, Command: []string{"sleep", "60"}}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Nodes: ns, RunDir: dir, Detach: true, Settle: -1}
	// Two workers, whatever the cores: the first node's work waits, the
	// other node's must still run.
	workers := afterWorkers
	afterWorkers = 2
	t.Cleanup(func() {
		afterWorkers = workers
		afterReleaseHook, c.Progress = nil, nil
		c.Kill(context.Background(), StopOptions{})
	})
	if _, err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	reported := map[string]chan struct{}{"w1": make(chan struct{}), "w2": make(chan struct{})}
	other := map[string]string{"w1": "w2", "w2": "w1"}
	var first string
	var heldUp bool
	c.Progress = func(r Result) { close(reported[r.Node.Name]) }
	afterReleaseHook = func(r *Result) {
		mu.Lock()
		isFirst := first == ""
		if isFirst {
			first = r.Node.Name
		}
		mu.Unlock()
		if !isFirst {
			return
		}
		// The first node's work waits for the other node's report.
		select {
		case <-reported[other[r.Node.Name]]:
		case <-time.After(10 * time.Second):
			mu.Lock()
			heldUp = true
			mu.Unlock()
		}
	}
	results, err := c.StopWait(context.Background(), StopOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if heldUp {
		t.Fatalf("%s's release was not reported while %s's work after its release waited: that work holds up the waiter's loop", other[first], first)
	}
	for _, r := range results {
		if r.Outcome != Stopped {
			t.Errorf("%s: %v, %v; want stopped", r.Node.Name, r.Outcome, r.Err)
		}
	}
}

// A stopwait removes each node's run tag (the rundir open once for all
// of them) before its signal: a multi run supervising the node then
// takes its end as asked for, not as a crash to restart.
func TestStopWaitRemovesRunTags(t *testing.T) {
	dir := t.TempDir()
	ns, err := nodes.Spec{Names: []string{"w1", "w2"}, RunDir: dir, Command: []string{"sleep", "60"}}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Nodes: ns, RunDir: dir, Detach: true, Settle: -1}
	t.Cleanup(func() { c.Kill(context.Background(), StopOptions{}) })
	if _, err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		if err := os.WriteFile(filepath.Join(dir, n.Name+runtag.Ext), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.StopWait(context.Background(), StopOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		if _, err := os.Stat(filepath.Join(dir, n.Name+runtag.Ext)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s's run tag after stopwait: %v; want it removed", n.Name, err)
		}
	}
}

// The signalling takes queued work itself beyond afterBacklog (help): a
// worker left without a core no longer leaves every node released
// meanwhile to be finished after the last death. Here the worker is held
// up; help must run all but limit of the queue on the caller's goroutine.
func TestAfterPoolHelpBoundsTheBacklog(t *testing.T) {
	var p afterPool
	hold, held := make(chan struct{}), make(chan struct{})
	p.do(func() { close(held); <-hold }) // the one worker, held up
	defer p.wait()
	defer close(hold)
	<-held
	var mu sync.Mutex
	ran := 0
	for range 10 {
		p.do(func() { mu.Lock(); ran++; mu.Unlock() })
	}
	p.help(3)
	mu.Lock()
	defer mu.Unlock()
	if ran != 7 {
		t.Fatalf("help(3) with 10 queued ran %d on the caller, want 7", ran)
	}
	p.mu.Lock()
	left := len(p.queue)
	p.mu.Unlock()
	if left != 3 {
		t.Fatalf("help(3) left %d queued, want 3", left)
	}
}

// Once the signalling is over (widen), the work queued while every worker
// is busy gets another worker at once, not after theirs: the core that
// signalled is free, and that work is what is left after the last death.
func TestAfterPoolWidenStartsAnotherWorker(t *testing.T) {
	workers := afterWorkers
	afterWorkers = 1
	t.Cleanup(func() { afterWorkers = workers })
	var p afterPool
	hold, held := make(chan struct{}), make(chan struct{})
	p.do(func() { close(held); <-hold })
	defer p.wait()
	defer close(hold)
	<-held
	ran := make(chan struct{})
	p.do(func() { close(ran) }) // queued behind the held-up worker
	p.widen()
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("work queued behind a busy worker did not run after widen")
	}
}
