package integration

import (
	"bufio"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/multi-launcher/multi/internal/testutil"
)

// stuckChild tells a fork child that never got to its exec (one thread,
// every signal blocked, its parent's command line) from the processes
// a script runs: here a python3 that forks such a child.
func TestStuckChildSeen(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	cmd := exec.Command(py, "-c", `
import os, signal, sys, time
pid = os.fork()
if pid == 0:
    signal.pthread_sigmask(signal.SIG_BLOCK, range(1, signal.NSIG))
    time.sleep(60)
    os._exit(0)
print(pid, flush=True)
time.sleep(60)
`)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || child <= 1 {
		t.Fatalf("child pid %q", line)
	}
	t.Cleanup(func() { syscall.Kill(child, syscall.SIGKILL) })
	// The child blocks its signals right after the fork: poll, with a
	// deadline, until it has.
	var ppid int
	var ok bool
	testutil.PollUntil(t, "the child to block its signals", func() bool {
		ppid, _, ok = stuckChild(child)
		return ok
	})
	if ppid != cmd.Process.Pid || !descends(child, cmd.Process.Pid) || !descends(child, syscall.Getpid()) {
		t.Errorf("stuckChild(%d): parent %d; want %d, and a descendant of this test", child, ppid, cmd.Process.Pid)
	}
	if _, _, ok := stuckChild(cmd.Process.Pid); ok {
		t.Error("the python3 parent (several threads or no mask) taken for a stuck child")
	}
}
