//go:build unix

package multi

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/pin"
)

// inChild runs the test named name again in a child process with env set,
// and fails if it fails there: a reaper's wait4(-1) must not reap the
// children of the other tests in this process.
func inChild(t *testing.T, name, env string) bool {
	t.Helper()
	if os.Getenv(env) == "1" {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), env+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: "+name)) {
		t.Fatalf("in a child process: %v\n%s", err, out)
	}
	return false
}

// reapUntil runs the reaper until cond holds (the test's deadline-bound
// poll stands in for SIGCHLD).
func reapUntil(t *testing.T, rp *reaper, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		rp.reapAll()
		rp.mu.Lock()
		ok := cond()
		rp.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the reaper never saw the exit")
		}
		time.Sleep(time.Millisecond)
	}
}

// Under Run the reaper is the only waiter: a status it reaped first still
// reaches the start path that waits for the process (waitChild), and the
// exit of a node let go reaches Run (handOver).
func TestReaperHandsStatusOver(t *testing.T) {
	if !inChild(t, "TestReaperHandsStatusOver", "MULTI_TEST_REAPER") {
		return
	}
	rp := newReaper()
	if !active.CompareAndSwap(nil, rp) {
		t.Fatal("a reaper is active already")
	}
	defer active.Store(nil)

	cmd := exec.Command("sh", "-c", "exit 3")
	if err := startChild(cmd); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	reapUntil(t, rp, func() bool {
		select {
		case <-rp.kids[pid].done:
			return true
		default:
			return false
		}
	})
	ws, err := waitChild(cmd)
	if err != nil || !ws.Exited() || ws.ExitStatus() != 3 {
		t.Fatalf("waitChild after the reaper reaped it: %v, %v; want exit status 3", ws, err)
	}

	cmd = exec.Command("sh", "-c", "kill -KILL $$")
	if err := startChild(cmd); err != nil {
		t.Fatal(err)
	}
	pid = cmd.Process.Pid // Released by handOver
	if !handOver(cmd) {
		t.Fatal("handOver: no run")
	}
	reapUntil(t, rp, func() bool { return len(rp.exits) > 0 })
	e := rp.takeExits()
	if len(e) != 1 || e[0].pid != pid || !e[0].status.Signaled() || e[0].status.Signal() != syscall.SIGKILL {
		t.Fatalf("exits %+v; want pid %d killed by KILL", e, pid)
	}
	if got := exitCode(e[0].status); got != 137 {
		t.Errorf("exit code %d; want 137", got)
	}
}

func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{&stepError{msg: "x", is: ErrCommandNotFound}, 127},
		{&stepError{msg: "x", is: ErrCommandNotExecutable}, 126},
		{&NodeError{Node: "w1", Op: "start", Err: &exitError{status: 3 << 8, err: ErrExitedAtOnce}}, 3},
		{&NodeError{Node: "w1", Op: "start", Err: &exitError{status: syscall.WaitStatus(syscall.SIGKILL), err: ErrExitedAtOnce}}, 137},
		{errors.New("other"), 1},
	} {
		if got := errExitCode(c.err); got != c.want {
			t.Errorf("errExitCode(%v) = %d; want %d", c.err, got, c.want)
		}
	}
}

func TestEndsNode(t *testing.T) {
	for _, c := range []struct {
		op   string
		sig  syscall.Signal
		want bool
	}{
		{"stop", syscall.SIGTERM, true},
		{"stop", syscall.SIGKILL, true},
		{"stop", syscall.SIGHUP, false},
		{"stop", syscall.SIGUSR1, false},
		{"stopwait", syscall.SIGHUP, true},
		{"kill", syscall.SIGKILL, true},
		{"restart", syscall.SIGTERM, true},
	} {
		if got := endsNode(c.op, c.sig); got != c.want {
			t.Errorf("endsNode(%s, %s) = %v; want %v", c.op, pin.SignalName(c.sig), got, c.want)
		}
	}
}

func TestParseOnExit(t *testing.T) {
	for s, want := range map[string]OnExit{"": StopAll, "stop-all": StopAll, "restart": RestartNode, "ignore": Ignore} {
		if got, err := ParseOnExit(s); err != nil || got != want {
			t.Errorf("ParseOnExit(%q) = %q, %v; want %q", s, got, err, want)
		}
	}
	if _, err := ParseOnExit("always"); err == nil {
		t.Error("ParseOnExit(always): no error")
	}
}
