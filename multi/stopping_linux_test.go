package multi_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// releaseNodeEnv makes the test binary, at init, a self-locking node that
// owns $MULTI_PIDFILE, says "up", and on SIGTERM releases its lock (the
// pidfile removed), says "released", and then, as the variable says,
// lingers that long and exits 0 ("linger=100ms"), or until a file exists
// ("until=PATH", a minute at most), or stays until killed (a minute at
// most: "hang").
const releaseNodeEnv = "MULTI_TEST_RELEASE_NODE"

func init() {
	mode := os.Getenv(releaseNodeEnv)
	if mode == "" {
		return
	}
	l, err := pidfile.OwnFromEnv()
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	fmt.Println("up")
	<-term
	l.Release()
	fmt.Println("released")
	if d, ok := strings.CutPrefix(mode, "linger="); ok {
		linger, _ := time.ParseDuration(d)
		time.Sleep(linger)
		os.Exit(0)
	}
	if path, ok := strings.CutPrefix(mode, "until="); ok {
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if _, err := os.Stat(path); err == nil {
				os.Exit(0)
			}
		}
	}
	time.Sleep(time.Minute)
	os.Exit(3)
}

// releaseCluster is a cluster of one self-locking node, w1, of the
// releaseNodeEnv mode given. Its cleanup kills the node's process if it
// still runs (its pid and start time checked), lock or not.
func releaseCluster(t *testing.T, mode string) (*multi.Cluster, func() (pid int)) {
	c := cluster(t, "", "w1")
	c.Nodes[0].SelfLock = true
	c.Nodes[0].Command = []string{os.Args[0], "-test.run=^$"}
	c.Env = append(os.Environ(), releaseNodeEnv+"="+mode, "GORACE=atexit_sleep_ms=0")
	var started []nodes.Started
	var mu sync.Mutex
	c.Progress = func(r multi.Result) {
		if r.Outcome == multi.Started && r.PID > 1 {
			if p, err := proc.Read(r.PID); err == nil {
				mu.Lock()
				started = append(started, nodes.Started{PID: r.PID, StartTicks: p.StartTicks})
				mu.Unlock()
			}
		}
	}
	t.Cleanup(func() {
		for _, st := range started {
			if p, err := proc.Read(st.PID); err == nil && !p.Gone() && p.StartTicks == st.StartTicks {
				syscall.Kill(st.PID, syscall.SIGKILL)
			}
		}
	})
	return c, func() int {
		mu.Lock()
		defer mu.Unlock()
		return started[len(started)-1].PID
	}
}

// runs reports whether pid runs, not gone nor a zombie.
func runs(pid int) bool {
	p, err := proc.Read(pid)
	return err == nil && !p.Gone()
}

// waitSays waits until the node's log has line said times.
func waitSays(t *testing.T, n nodes.Node, line string, times int) {
	t.Helper()
	pollUntil(t, fmt.Sprintf("%s to say %q %d times", n.LogFile, line, times), func() bool {
		b, _ := os.ReadFile(n.LogFile)
		return strings.Count(string(b), line+"\n") >= times
	})
}

// StopWait returns when the node's process is gone, not only its lock: a
// node that releases its lock and lives on is waited for, and killed
// after the timeout through the pidfd that pinned it.
func TestStopWaitWaitsForProcessNotLock(t *testing.T) {
	c, last := releaseCluster(t, "hang")
	if _, err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	pid := last()
	waitUp(t, c.Nodes[0])
	// The node hangs a minute: a StopWait that cannot kill it fails with
	// this deadline.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	res, err := c.StopWait(ctx, multi.StopOptions{Timeout: time.Second})
	if runs(pid) {
		t.Fatalf("StopWait returned %q (%v) while pid %d still runs", res[0], err, pid)
	}
	if err != nil || res[0].Outcome != multi.KilledAfterTimeout || res[0].PID != pid {
		t.Fatalf("StopWait: %v, %q; want killed after 1s (pid %d)", err, res[0], pid)
	}
}

// A node on its way out (its lock released a moment before it exits) is
// not lost: Status waits a moment and sees it stopped, and Start waits for
// it and starts the node again, rather than refusing with ErrLost.
func TestStoppingIsNotLost(t *testing.T) {
	c, last := releaseCluster(t, "linger=100ms")
	if _, err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	n := c.Nodes[0]
	waitUp(t, n)
	if _, err := c.Stop(t.Context(), multi.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSays(t, n, "released", 1)
	sts, err := c.Status(t.Context())
	if err != nil || sts[0].State != multi.StateStopped {
		t.Fatalf("Status of a node on its way out: %v, %+v; want stopped", err, sts[0])
	}
	if _, err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	old := last()
	waitSays(t, n, "up", 2)
	if _, err := c.Stop(t.Context(), multi.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSays(t, n, "released", 2)
	res, err := c.Start(t.Context())
	if errors.Is(err, multi.ErrLost) || err != nil || res[0].Outcome != multi.Started {
		t.Fatalf("Start of a node on its way out: %v, %q; want it started again", err, res[0])
	}
	if runs(old) {
		t.Fatalf("started again beside pid %d, which still runs", old)
	}
	if _, err := c.StopWait(t.Context(), multi.StopOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Concurrent starts of a self-locking node: the loser's node exits at
// once (OwnFromEnv finds the lock held), and its start says the node is
// already running, never that it failed, while the winner's node runs.
//
// The window is held open: a start that has seen the lock not held by its
// node waits until that node holds it or has exited before it looks at the
// node again (the loser exits, OwnFromEnv finding the lock taken).
func TestConcurrentSelfLockStarts(t *testing.T) {
	c := selfCluster(t, "own")
	path := c.Nodes[0].PidFile
	defer multi.SetTestHookSelfLockUnheld(func(pid int) {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if info, err := pidfile.Inspect(path); exited(pid) || err == nil && info.PID == pid && info.FilePID == pid {
				return
			}
		}
	})()
	for round := range 5 {
		var wg sync.WaitGroup
		res := make([][]multi.Result, 2)
		for k := range res {
			c2 := multi.Cluster{Nodes: c.Nodes, RunDir: c.RunDir, Env: c.Env}
			wg.Go(func() { res[k], _ = c2.Start(t.Context()) })
		}
		wg.Wait()
		started := 0
		for _, r := range res {
			switch r[0].Outcome {
			case multi.Started:
				started++
			case multi.AlreadyRunning:
			default:
				t.Errorf("round %d: %q; want started or already running", round, r[0])
			}
		}
		if started != 1 {
			t.Errorf("round %d: %d starts; want 1", round, started)
		}
		if _, err := c.StopWait(t.Context(), multi.StopOptions{}); err != nil {
			t.Fatal(err)
		}
		if t.Failed() {
			return
		}
	}
}

// A node stopped by someone else in Start's settle window, on its way out
// (its lock released, about to exit), is not SIGKILLed by Start's last
// check: it is waited for, and exits as it meant to.
func TestStartNeverKillsNodeOnItsWayOut(t *testing.T) {
	exit := filepath.Join(t.TempDir(), "exit")
	c, _ := releaseCluster(t, "until="+exit)
	c.Settle = time.Minute // ended by the context, below
	n := c.Nodes[0]
	defer multi.SetTestHookOnItsWay(func(int) { os.WriteFile(exit, nil, 0o644) })()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan multi.Result, 1)
	go func() {
		res, _ := c.Start(ctx)
		done <- res[0]
	}()
	// Start records the node's process once it holds its lock: then
	// Start is in the settle window.
	pollUntil(t, "the record to name the node's process", func() bool {
		_, st, err := record.ReadStarted(c.RunDir, n.Name)
		return err == nil && st.PID > 0
	})
	waitSays(t, n, "up", 1)
	other := multi.Cluster{Nodes: c.Nodes, RunDir: c.RunDir}
	if _, err := other.Stop(t.Context(), multi.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSays(t, n, "released", 1)
	cancel() // the settle window ends: Start checks its node now
	r := <-done
	if r.Err == nil || strings.Contains(r.Err.Error(), "killed") || !strings.Contains(r.Err.Error(), "exit status 0") {
		t.Fatalf("Start of a node stopped in its settle window: %q; want it seen exiting by itself (exit status 0), not killed", r)
	}
}
