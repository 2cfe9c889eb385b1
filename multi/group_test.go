//go:build linux

package multi_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
	"github.com/multi-launcher/multi/waiter"
)

// startForked starts a "fork" node (a node with a child in its process
// group) and returns the node's and the child's pids once both handle
// SIGTERM. The child is SIGKILLed at cleanup through a pidfd, if alive.
func startForked(t *testing.T, name string) (nodes.Node, int, int) {
	t.Helper()
	c := cluster(t, "fork", name)
	if _, err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	n := c.Nodes[0]
	pid := holderOf(t, n)
	re := regexp.MustCompile(`(?m)^child ([0-9]+)$`)
	var m [][]byte
	pollUntil(t, n.LogFile+` to say "child PID" and "up" twice`, func() bool {
		b, _ := os.ReadFile(n.LogFile)
		m = re.FindSubmatch(b)
		return m != nil && strings.Count(string(b), "up\n") >= 2
	})
	child, _ := strconv.Atoi(string(m[1]))
	fd, err := unix.PidfdOpen(child, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		unix.Close(fd)
	})
	return n, pid, child
}

// exited reports whether pid is gone or a zombie.
func exited(pid int) bool {
	p, err := proc.Read(pid)
	return err != nil || p.Gone()
}

func waitExited(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !exited(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d still runs", pid)
		}
		time.Sleep(time.Millisecond)
	}
}

// Without Group only the lock holder is signalled; with it, the holder's
// whole process group, children included.
func TestGroupSignal(t *testing.T) {
	t.Parallel()
	n1, p1, c1 := startForked(t, "w1")
	n2, p2, c2 := startForked(t, "w2")

	pid, err := multi.SignalNode(n1.PidFile, 0, syscall.SIGTERM, false)
	if err != nil || pid != p1 {
		t.Fatalf("SignalNode without group: %d, %v", pid, err)
	}
	if err := waiter.Wait(t.Context(), n1.PidFile, nil); err != nil {
		t.Fatal(err)
	}
	if exited(c1) {
		t.Errorf("the child %d of w1 got the signal meant for its parent", c1)
	}

	pid, err = multi.SignalNode(n2.PidFile, 0, syscall.SIGTERM, true)
	if err != nil || pid != p2 {
		t.Fatalf("SignalNode with group: %d, %v", pid, err)
	}
	if err := waiter.Wait(t.Context(), n2.PidFile, nil); err != nil {
		t.Fatal(err)
	}
	waitExited(t, c2)
	if log, _ := os.ReadFile(n2.LogFile); strings.Count(string(log), "term\n") != 2 {
		t.Errorf("w2 log %q; want both processes terminated by TERM", log)
	}
}

// A lock holder that does not lead its own process group (here, one in
// this test's group) does not get its group signalled, nor itself.
func TestGroupRefusesNonLeader(t *testing.T) {
	t.Parallel()
	pidfile := filepath.Join(t.TempDir(), "x.pid")
	holder := exec.Command(os.Args[0], "-test.run=^$")
	out := filepath.Join(t.TempDir(), "out")
	f, _ := os.Create(out)
	defer f.Close()
	holder.Stdout = f
	holder.Env = append(os.Environ(), "MULTI_TEST_NODE=lock", "MULTI_TEST_LOCK="+pidfile, "GORACE=atexit_sleep_ms=0")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		holder.Process.Kill()
		holder.Wait()
	}()
	pollUntil(t, out+` to say "up"`, func() bool {
		b, _ := os.ReadFile(out)
		return strings.Contains(string(b), "up\n")
	})
	_, err := multi.SignalNode(pidfile, 0, syscall.SIGTERM, true)
	if err == nil || !strings.Contains(err.Error(), "not the leader of its own process group") {
		t.Fatalf("SignalNode with group on a non-leader: %v", err)
	}
	if b, _ := os.ReadFile(out); strings.Contains(string(b), "term") || exited(holder.Process.Pid) {
		t.Fatalf("the holder was signalled: %q", b)
	}
	// Without Group it is the holder, and is signalled.
	if pid, err := multi.SignalNode(pidfile, 0, syscall.SIGTERM, false); err != nil || pid != holder.Process.Pid {
		t.Fatalf("SignalNode: %d, %v", pid, err)
	}
	holder.Wait()
}

// signalGroupEnv makes the test binary, at init, a multi that signals the
// process group of the holder of the pidfile it names (SignalNode with
// group), prints the error and exits 0.
const signalGroupEnv = "MULTI_TEST_SIGNAL_GROUP"

func init() {
	if path := os.Getenv(signalGroupEnv); path != "" {
		_, err := multi.SignalNode(path, 0, syscall.SIGTERM, true)
		fmt.Println(err)
		os.Exit(0)
	}
}

// A lock holder that leads multi's own process group does not get that
// group signalled: the signal would reach multi too, and whoever started
// it. Here the holder leads a group of its own, and a multi (this test
// binary at init) runs in it.
func TestGroupRefusesOwnGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidfile, out := filepath.Join(dir, "x.pid"), filepath.Join(dir, "out")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	holder := exec.Command(os.Args[0], "-test.run=^$")
	holder.Stdout = f
	holder.Env = append(os.Environ(), "MULTI_TEST_NODE=lock", "MULTI_TEST_LOCK="+pidfile, "GORACE=atexit_sleep_ms=0")
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		holder.Process.Kill()
		holder.Wait()
	}()
	pollUntil(t, out+` to say "up"`, func() bool {
		b, _ := os.ReadFile(out)
		return strings.Contains(string(b), "up\n")
	})
	m := exec.Command(os.Args[0], "-test.run=^$")
	m.Env = append(os.Environ(), signalGroupEnv+"="+pidfile, "GORACE=atexit_sleep_ms=0")
	m.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: holder.Process.Pid}
	said, err := m.Output()
	if err != nil {
		t.Fatalf("the multi in the holder's group: %v (it signalled its own group); said %q", err, said)
	}
	if !strings.Contains(string(said), "multi's own process group") {
		t.Fatalf("SignalNode with group on multi's own group: %q", said)
	}
	if b, _ := os.ReadFile(out); strings.Contains(string(b), "term") || exited(holder.Process.Pid) {
		t.Fatalf("the holder was signalled: %q", b)
	}
}

// Signalling a stale pidfile that a concurrent stopwait removes: no panic,
// no signal, "not running".
func TestSignalPidfileRemovedConcurrently(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "w1.pid")
	for i := 0; i < 2000; i++ {
		os.WriteFile(path, []byte("1\n"), 0o644)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			pidfile.RemoveStale(path)
		}()
		pid, err := multi.SignalNode(path, 0, syscall.SIGTERM, i%2 == 0)
		wg.Wait()
		if pid != 0 || !errors.Is(err, multi.ErrNotRunning) {
			t.Fatalf("try %d: %d, %v", i, pid, err)
		}
	}
}
