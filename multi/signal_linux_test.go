package multi_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// The holder F_GETLK names lets go of the lock before it is pinned, and
// lives on: the check after pidfd_open must see that the pinned process no
// longer holds the lock, and signal nothing. The process handles no
// signal, so a SIGTERM would show in its exit status.
func TestSignalRechecksLockAfterPin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w1.pid")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MULTI_TEST_NODE=unlock", "MULTI_TEST_LOCK="+path, "GORACE=atexit_sleep_ms=0")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	exitErr := make(chan error, 1)
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		<-exitErr
	})
	out := bufio.NewScanner(stdout)
	expect := func(line string) {
		t.Helper()
		if !out.Scan() || out.Text() != line {
			t.Fatalf("helper said %q (%v); want %q", out.Text(), out.Err(), line)
		}
	}
	expect("up")
	go func() {
		for out.Scan() {
		}
		exitErr <- cmd.Wait()
	}()

	hooked := 0
	unlocked := make(chan struct{})
	defer multi.SetTestHookBeforePin(func(holder int) {
		hooked++
		if hooked > 1 {
			t.Errorf("holder pid %d seen again after it let go of the lock", holder)
			return
		}
		if holder != pid {
			t.Errorf("holder %d; want %d", holder, pid)
		}
		// Let go of the lock, and wait until it has: the pidfile's lock
		// is free and its holder still runs.
		if _, err := stdin.Write([]byte("unlock\n")); err != nil {
			t.Error(err)
		}
		close(unlocked)
		waitFree(t, path)
	})()
	_, err = multi.SignalNode(path, 0, syscall.SIGTERM, false)
	if !errors.Is(err, multi.ErrNotRunning) {
		t.Errorf("SignalNode: %v; want ErrNotRunning", err)
	}
	<-unlocked
	stdin.Close()
	if err := <-exitErr; err != nil {
		t.Errorf("the process that let go of the lock: %v; want a clean exit, no signal", err)
	}
	exitErr <- nil // for the cleanup
}

// waitFree waits until nobody holds the pidfile's lock.
func waitFree(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := pidfile.Inspect(path)
		if err == nil && info.State == pidfile.Stale {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %+v, %v; want the lock free", path, info, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// StopWait and Restart with a stop signal would wait for ever: they
// refuse, and signal nothing.
func TestStopWaitRefusesStopSignal(t *testing.T) {
	t.Parallel()
	c := cluster(t, "term", "w1")
	if _, err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitUp(t, c.Nodes[0])
	pid := holderOf(t, c.Nodes[0])
	// The timeout only bounds a failing test, which would wait for ever.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for _, sig := range []syscall.Signal{syscall.SIGSTOP, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU} {
		if _, err := c.StopWait(ctx, multi.StopOptions{Signal: sig}); !errors.Is(err, multi.ErrStopSignal) {
			t.Errorf("StopWait -%s: %v; want errStopSignal", pin.SignalName(sig), err)
		}
		if _, err := c.Restart(ctx, multi.RestartOptions{Stop: multi.StopOptions{Signal: sig}}); !errors.Is(err, multi.ErrStopSignal) {
			t.Errorf("Restart -%s: %v; want errStopSignal", pin.SignalName(sig), err)
		}
		if exited(pid) || procState(pid) == 'T' || holderOf(t, c.Nodes[0]) != pid {
			t.Fatalf("-%s: node pid %d was signalled", pin.SignalName(sig), pid)
		}
	}
}

// procState is the state letter in /proc/PID/stat.
func procState(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return 0
	}
	return s[i+2]
}

// startUnlockNode starts this test binary in the "unlock" role on path and
// returns it once it holds the lock, with its stdin and its output.
func startUnlockNode(t *testing.T, path string) (*exec.Cmd, io.WriteCloser, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MULTI_TEST_NODE=unlock", "MULTI_TEST_LOCK="+path, "GORACE=atexit_sleep_ms=0")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	out := bufio.NewScanner(stdout)
	if !out.Scan() || out.Text() != "up" {
		t.Fatalf("unlock node said %q (%v); want up", out.Text(), out.Err())
	}
	return cmd, stdin, out
}

// The SIGKILL round signals through the pidfd kept from the first signal,
// never by pid: here the pinned process has died and another holds the
// lock under the very pid the round expects (a reused pid, as far as the
// lock can tell). The signal must go nowhere, and the new holder live on.
// And a lock now held by another pid than the one awaited gives
// ErrNotRunning and no signal.
func TestKillHeldNeverSignalsReusedPid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w1.pid")
	a, _, _ := startUnlockNode(t, path)
	fd, err := unix.PidfdOpen(a.Process.Pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		t.Skipf("no pidfds: %v", err)
	}
	pidfd := os.NewFile(uintptr(fd), "pidfd")
	defer pidfd.Close()
	a.Process.Kill()
	a.Wait()
	b, bin, bout := startUnlockNode(t, path)
	h, err := pidfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := multi.KillHeld(h, pidfd, path, a.Process.Pid, syscall.SIGKILL, false); !errors.Is(err, multi.ErrNotRunning) {
		t.Fatalf("KillHeld of a pid no longer holding the lock: %v; want ErrNotRunning", err)
	}
	if err := multi.KillHeld(h, pidfd, path, b.Process.Pid, syscall.SIGKILL, false); err != nil {
		t.Fatalf("KillHeld through the pidfd of a dead process: %v", err)
	}
	// Still there: it answers.
	io.WriteString(bin, "\n")
	if !bout.Scan() || bout.Text() != "unlocked" {
		t.Fatalf("the new holder did not answer (%q, %v): it was signalled", bout.Text(), bout.Err())
	}
}
