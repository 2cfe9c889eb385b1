package multi_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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
		c.Signal = sig
		if _, err := c.StopWait(ctx); !errors.Is(err, multi.ErrStopSignal) {
			t.Errorf("StopWait -%s: %v; want ErrStopSignal", multi.SignalName(sig), err)
		}
		if _, err := c.Restart(ctx); !errors.Is(err, multi.ErrStopSignal) {
			t.Errorf("Restart -%s: %v; want ErrStopSignal", multi.SignalName(sig), err)
		}
		if exited(pid) || procState(pid) == 'T' || holderOf(t, c.Nodes[0]) != pid {
			t.Fatalf("-%s: node pid %d was signalled", multi.SignalName(sig), pid)
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
