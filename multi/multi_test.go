package multi_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// nodeEnv makes the test binary a node: it prints "up", exits 0 on SIGTERM
// (printing "term"), ignores SIGTERM when set to "ignore-term", and exits
// by itself after a minute so that nothing outlives a broken test for long.
// As "fork" it first starts a child "term" node in its process group and
// prints "child PID"; as "lock" it first locks the pidfile named by
// $MULTI_TEST_LOCK itself (it is then no session leader).
const nodeEnv = "MULTI_TEST_NODE"

func TestMain(m *testing.M) {
	testutil.ServeRoles() // testutil.SeenFromChild's child
	if os.Getenv(nodeEnv) == "unlock" {
		unlockNode()
	}
	if os.Getenv(nodeEnv) == "needs" {
		needsNode() // needs_test.go
	}
	if os.Getenv(nodeEnv) == "lines" {
		linesNode() // logbench_unix_test.go
	}
	if role := os.Getenv(nodeEnv); role != "" {
		if role == "fork" {
			// A node with a child in its process group: the child is
			// this binary as a "term" node, sharing the log.
			child := exec.Command(os.Args[0], "-test.run=^$")
			child.Env = append(os.Environ(), nodeEnv+"=term")
			child.Stdout, child.Stderr = os.Stdout, os.Stderr
			if err := child.Start(); err != nil {
				fmt.Println("fork:", err)
				os.Exit(1)
			}
			go child.Wait()
			fmt.Printf("child %d\n", child.Process.Pid)
		}
		if role == "lock" {
			// Not a node: a process that locks the pidfile in
			// MULTI_TEST_LOCK itself, in its parent's process group.
			if _, err := pidfile.Acquire(os.Getenv("MULTI_TEST_LOCK")); err != nil {
				fmt.Println(err)
				os.Exit(1)
			}
		}
		sigs := make(chan os.Signal, 1)
		if role == "ignore-term" {
			signal.Ignore(syscall.SIGTERM)
		} else {
			signal.Notify(sigs, syscall.SIGTERM)
		}
		fmt.Println("up")
		select {
		case <-sigs:
			fmt.Println("term")
			os.Exit(0)
		case <-time.After(time.Minute):
			os.Exit(3)
		}
	}
	testutil.MainSweepingCgroups(m)
}

// unlockNode is the "unlock" role: it locks the pidfile in
// $MULTI_TEST_LOCK as a node does, says "up", and at a line on stdin lets
// go of the lock, keeping the file, and says "unlocked"; it exits 0 at the
// end of stdin. It handles no signal: a SIGTERM kills it.
func unlockNode() {
	l, err := pidfile.Acquire(os.Getenv("MULTI_TEST_LOCK"))
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("up")
	in := bufio.NewScanner(os.Stdin)
	if in.Scan() {
		l.Close()
		fmt.Println("unlocked")
	}
	for in.Scan() {
	}
	os.Exit(0)
}

// cluster returns a cluster of the named nodes in a fresh rundir, running
// this test binary as a node in the given role ("" runs sleep). Its cleanup
// kills whatever still holds a pidfile's lock there.
func cluster(t *testing.T, role string, names ...string) *multi.Cluster {
	t.Helper()
	rundir := t.TempDir()
	cmd := []string{"sleep", "300"}
	env := os.Environ()
	if role != "" {
		cmd = []string{os.Args[0], "-test.run=^$"}
		// The race runtime sleeps a second at exit by default.
		env = append(env, nodeEnv+"="+role, "GORACE=atexit_sleep_ms=0")
	}
	ns, err := nodes.Spec{Names: names, RunDir: rundir, Command: cmd}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range ns {
			if pid := testutil.Holder(n.PidFile); pid > 1 {
				killGroup(pid)
			}
		}
	})
	return &multi.Cluster{Nodes: ns, RunDir: rundir, Env: env}
}

// waitUp waits until each node has said "up" in its log: its signal
// handling is in place, so a signal cannot come too early.
func waitUp(t *testing.T, ns ...nodes.Node) {
	t.Helper()
	for _, n := range ns {
		pollUntil(t, n.Name+` to say "up" in its log`, func() bool {
			b, err := os.ReadFile(n.LogFile)
			return err == nil && strings.Count(string(b), "up\n") > strings.Count(string(b), "term\n")
		})
	}
}

func holderOf(t *testing.T, n nodes.Node) int {
	t.Helper()
	info, err := pidfile.Inspect(n.PidFile)
	if err != nil || info.State != pidfile.Running {
		t.Fatalf("%s: %+v, %v; want running", n.Name, info, err)
	}
	return info.PID
}

func TestStartStatusStopWait(t *testing.T) {
	t.Parallel()
	c := cluster(t, "", "w1", "w2", "w3")
	res, err := c.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if got := holderOf(t, c.Nodes[i]); r.PID != got || r.Outcome != multi.Started || r.String() != fmt.Sprintf("w%d: started (pid %d)", i+1, got) {
			t.Errorf("result %q; holder %d", r, got)
		}
		if rec, err := record.Read(c.RunDir, r.Node.Name); err != nil || rec.Command[0] != "sleep" {
			t.Errorf("record: %+v, %v", rec, err)
		}
	}
	sts, err := c.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range sts {
		if s.State != multi.StateRunning || s.PID != res[i].PID {
			t.Errorf("status %s: %+v", s.Node.Name, s)
		}
	}
	res, err = c.StopWait(t.Context(), multi.StopOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.PID != sts[i].PID || r.Outcome != multi.Stopped || r.Signal != syscall.SIGTERM || r.Elapsed <= 0 {
			t.Errorf("stopwait: %q", r)
		}
		if _, err := os.Stat(r.Node.PidFile); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: pidfile left: %v", r.Node.Name, err)
		}
	}
}

func TestStartAlreadyRunning(t *testing.T) {
	t.Parallel()
	c := cluster(t, "", "w1")
	first, err := c.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// An outcome, not a failure: no error, as an init script has it.
	res, err := c.Start(t.Context())
	if err != nil || res[0].Err != nil {
		t.Fatalf("second Start: %v, %v; want no error", err, res[0].Err)
	}
	if res[0].PID != first[0].PID || res[0].Outcome != multi.AlreadyRunning || holderOf(t, c.Nodes[0]) != first[0].PID {
		t.Errorf("second start: %+v; the first instance (pid %d) must be the only one", res[0], first[0].PID)
	}
}

func TestStartFailures(t *testing.T) {
	t.Parallel()
	c := cluster(t, "", "w1")
	c.Nodes[0].Command = []string{"surely-not-a-program-here"}
	res, err := c.Start(t.Context())
	if err == nil || !strings.Contains(res[0].String(), `w1: FAILED: exec: "surely-not-a-program-here": executable file not found`) {
		t.Fatalf("Start: %q, %v", res[0], err)
	}
	if _, err := os.Lstat(c.Nodes[0].PidFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pidfile left behind by a failed start: %v", err)
	}
	if _, err := record.Read(c.RunDir, "w1"); err == nil {
		t.Errorf("a failed start was recorded")
	}

	c.Nodes[0].Command = nil
	if _, err := c.Start(t.Context()); !errors.Is(err, multi.ErrNoCommand) {
		t.Errorf("no command: %v", err)
	}

	// A rundir that cannot be made: nothing starts at all.
	c = cluster(t, "", "w1", "w2")
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o644)
	c.RunDir = filepath.Join(blocker, "run")
	res, err = c.Start(t.Context())
	if err == nil {
		t.Fatal("Start with a bad rundir succeeded")
	}
	for _, r := range res {
		if r.Err == nil || r.PID != 0 {
			t.Errorf("%q: want FAILED and nothing started", r)
		}
		if info, _ := pidfile.Inspect(r.Node.PidFile); info.State != pidfile.Absent {
			t.Errorf("%s: pidfile %v", r.Node.Name, info.State)
		}
	}
}

// A stale pidfile is never signalled, whatever it names: here this very
// test process, which SIGTERM would kill.
func TestStaleNeverSignalled(t *testing.T) {
	t.Parallel()
	for _, text := range []string{strconv.Itoa(os.Getpid()) + "\n", "1\n", "-1\n", "0\n", "garbage", ""} {
		c := cluster(t, "", "w1")
		os.WriteFile(c.Nodes[0].PidFile, []byte(text), 0o644)
		for name, verb := range map[string]func(context.Context) ([]multi.Result, error){
			"stop": defaults(c.Stop), "stopwait": defaults(c.StopWait), "kill": defaults(c.Kill),
		} {
			os.WriteFile(c.Nodes[0].PidFile, []byte(text), 0o644)
			res, err := verb(t.Context())
			if err != nil || res[0].Outcome != multi.StaleRemoved || res[0].PID != 0 {
				t.Errorf("%s on %q: %q, %v", name, text, res[0], err)
			}
		}
	}
}

func TestStopWaitTimeoutKills(t *testing.T) {
	t.Parallel()
	c := cluster(t, "ignore-term", "w1")
	if _, err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	pid := holderOf(t, c.Nodes[0])
	waitUp(t, c.Nodes...)
	res, err := c.StopWait(t.Context(), multi.StopOptions{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].PID != pid || res[0].Outcome != multi.KilledAfterTimeout || res[0].KilledAfter != 50*time.Millisecond {
		t.Errorf("result %q, killed after %s", res[0], res[0].KilledAfter)
	}
}

func TestStopWaitCancelled(t *testing.T) {
	t.Parallel()
	c := cluster(t, "ignore-term", "w1")
	if _, err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	pid := holderOf(t, c.Nodes[0])
	waitUp(t, c.Nodes...)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	_, err := c.StopWait(ctx, multi.StopOptions{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("StopWait: %v; want the context's error", err)
	}
	if holderOf(t, c.Nodes[0]) != pid {
		t.Fatal("node changed")
	}
	res, err := c.Kill(t.Context(), multi.StopOptions{})
	if err != nil || res[0].Outcome != multi.Killed || res[0].PID != pid {
		t.Fatalf("Kill: %q, %v", res[0], err)
	}
}

func TestRestart(t *testing.T) {
	t.Parallel()
	c := cluster(t, "term", "w1", "w2")
	if _, err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	old := holderOf(t, c.Nodes[0])
	waitUp(t, c.Nodes...)
	// w2 goes down behind multi's back; restart just starts it.
	if _, err := (&multi.Cluster{Nodes: c.Nodes[1:], RunDir: c.RunDir}).Kill(t.Context(), multi.StopOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := c.Restart(t.Context(), multi.RestartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := holderOf(t, c.Nodes[0])
	if now == old || res[0].Outcome != multi.Restarted || res[0].PID != now || res[0].OldPID != old {
		t.Errorf("w1: %q (old pid %d)", res[0], old)
	}
	if res[1].Outcome != multi.Started || res[1].PID != holderOf(t, c.Nodes[1]) || res[1].OldPID != 0 {
		t.Errorf("w2: %q", res[1])
	}
	waitUp(t, c.Nodes[0])
	log, _ := os.ReadFile(c.Nodes[0].LogFile)
	if string(log) != "up\nterm\nup\n" {
		t.Errorf("w1 log %q; want up, term, up", log)
	}
	if _, err := c.StopWait(t.Context(), multi.StopOptions{}); err != nil {
		t.Fatal(err)
	}
}

// defaults binds a verb that takes StopOptions to the default options.
func defaults(verb func(context.Context, multi.StopOptions) ([]multi.Result, error)) func(context.Context) ([]multi.Result, error) {
	return func(ctx context.Context) ([]multi.Result, error) { return verb(ctx, multi.StopOptions{}) }
}

// restart is c.Restart with the default options.
func restart(c *multi.Cluster) func(context.Context) ([]multi.Result, error) {
	return func(ctx context.Context) ([]multi.Result, error) { return c.Restart(ctx, multi.RestartOptions{}) }
}

// bind binds a verb that takes StopOptions to o.
func bind(o multi.StopOptions, verb func(context.Context, multi.StopOptions) ([]multi.Result, error)) func(context.Context) ([]multi.Result, error) {
	return func(ctx context.Context) ([]multi.Result, error) { return verb(ctx, o) }
}
