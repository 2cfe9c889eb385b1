//go:build unix

package launch

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/testutil"
)

// reapUntil runs the reaper until cond holds (the test's deadline-bound
// poll stands in for SIGCHLD).
func reapUntil(t *testing.T, rp *Reaper, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		rp.ReapAll()
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
	if !testutil.InChild(t, "TestReaperHandsStatusOver", "MULTI_TEST_REAPER") {
		return
	}
	rp := NewReaper()

	cmd := exec.Command("sh", "-c", "exit 3")
	if err := rp.startChild(cmd); err != nil {
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
	ws, err := rp.waitChild(cmd)
	if err != nil || !ws.Exited() || ws.ExitStatus() != 3 {
		t.Fatalf("waitChild after the reaper reaped it: %v, %v; want exit status 3", ws, err)
	}

	cmd = exec.Command("sh", "-c", "kill -KILL $$")
	if err := rp.startChild(cmd); err != nil {
		t.Fatal(err)
	}
	pid = cmd.Process.Pid // Released by handOver
	if !rp.handOver(cmd) {
		t.Fatal("handOver: no run")
	}
	reapUntil(t, rp, func() bool { return len(rp.exits) > 0 })
	e := rp.TakeExits()
	if len(e) != 1 || e[0].PID != pid || !e[0].Status.Signaled() || e[0].Status.Signal() != syscall.SIGKILL {
		t.Fatalf("exits %+v; want pid %d killed by KILL", e, pid)
	}
	if got := ExitCode(e[0].Status); got != 137 {
		t.Errorf("exit code %d; want 137", got)
	}
}

// A check's command under Run (--ready=exec:, --live=exec:): its status
// comes from the reaper, which meanwhile reaps every child there is; a
// wait of the command's own would lose it ("no child processes") and fail
// a healthy node's check. One cut off by its context is killed.
func TestReaperRunsChecks(t *testing.T) {
	if !testutil.InChild(t, "TestReaperRunsChecks", "MULTI_TEST_REAPER") {
		return
	}
	rp := NewReaper()
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() { // the run's loop, reaping all the time
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			default:
			}
			rp.ReapAll()
			time.Sleep(20 * time.Microsecond)
		}
	}()
	defer func() { close(stop); <-stopped }()
	for i := range 50 {
		if _, err := rp.RunCheck(context.Background(), exec.Command("true")); err != nil {
			t.Fatalf("check %d, true: %v", i, err)
		}
		if _, err := rp.RunCheck(context.Background(), exec.Command("false")); err == nil || err.Error() != "exit status 1" {
			t.Fatalf("check %d, false: %v; want exit status 1", i, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if pid, err := rp.RunCheck(ctx, exec.Command("sleep", "300")); err == nil || err.Error() != "signal: killed" || pid <= 1 {
		t.Fatalf("a check past its deadline: pid %d, %v; want it killed", pid, err)
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
		{fmt.Errorf("start w1: %w", &ExitError{Status: 3 << 8, Err: ErrExitedAtOnce}), 3},
		{fmt.Errorf("start w1: %w", &ExitError{Status: syscall.WaitStatus(syscall.SIGKILL), Err: ErrExitedAtOnce}), 137},
		{errors.New("other"), 1},
	} {
		if got := ErrExitCode(c.err); got != c.want {
			t.Errorf("errExitCode(%v) = %d; want %d", c.err, got, c.want)
		}
	}
}
