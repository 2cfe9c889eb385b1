//go:build linux

package integration

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/nodes/pidfile"
	"golang.org/x/sys/unix"
)

// startRun starts `multi run` with args and the rundir, its output in
// files of dir, and returns it with a channel closed when it has exited.
// Whatever it leaves is killed at the end of the test: the run by pid, its
// nodes through their locks.
func startRun(t *testing.T, dir, rundir string, env []string, names []string, args ...string) (*exec.Cmd, chan struct{}) {
	t.Helper()
	cmd := exec.Command(raceBinary(t), append([]string{"run"}, args...)...)
	cmd.Env = append(append(os.Environ(), "MULTI_RUNDIR="+rundir, "GORACE=atexit_sleep_ms=0"), env...)
	out, err := os.Create(filepath.Join(dir, "run.out"))
	mustOK(t, err)
	defer out.Close()
	errf, err := os.Create(filepath.Join(dir, "run.err"))
	mustOK(t, err)
	defer errf.Close()
	cmd.Stdout, cmd.Stderr = out, errf
	mustOK(t, cmd.Start())
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			cmd.Process.Kill()
			<-done
		}
		for _, n := range names {
			killHolder(t, filepath.Join(rundir, n+".pid"))
		}
	})
	return cmd, done
}

// waitRunExit waits for the run to exit, up to within (a deadline, not a
// timing assert: a run that lost its stop never exits), and returns its
// exit code.
func waitRunExit(t *testing.T, cmd *exec.Cmd, done chan struct{}, dir string, within time.Duration) int {
	t.Helper()
	select {
	case <-done:
	case <-time.After(within):
		errs, _ := os.ReadFile(filepath.Join(dir, "run.err"))
		t.Fatalf("multi run still runs %s later\n%s", within, errs)
	}
	return cmd.ProcessState.ExitCode()
}

// allUnlocked fails the test if a node's lock is still held.
func allUnlocked(t *testing.T, rundir string, names []string) {
	t.Helper()
	for _, n := range names {
		info, err := pidfile.Inspect(filepath.Join(rundir, n+".pid"))
		if err != nil || info.State == pidfile.Running {
			t.Errorf("%s: %v, %v; want its lock released", n, info.State, err)
		}
	}
}

// A storm of forwarded signals (HUP, USR1, USR2, WINCH), faster than the
// run can forward them to its nodes, then one TERM: the TERM is never
// lost, and the run stops every node and exits within --timeout.
// MULTI_STORM_RUNS sets how many runs (3 by default; 100 for the
// acceptance), MULTI_STORM_SIGNALS how many signals each (10,000).
func TestRunStopSurvivesSignalStorm(t *testing.T) {
	t.Parallel()
	runs, signals := 3, 10000
	if n, err := strconv.Atoi(os.Getenv("MULTI_STORM_RUNS")); err == nil {
		runs = n
	}
	if n, err := strconv.Atoi(os.Getenv("MULTI_STORM_SIGNALS")); err == nil {
		signals = n
	}
	const timeout = 5 * time.Second
	var names []string
	for i := 1; i <= 20; i++ {
		names = append(names, fmt.Sprintf("w%d", i))
	}
	storm := []syscall.Signal{syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH}
	for run := 0; run < runs; run++ {
		dir := t.TempDir()
		rundir := filepath.Join(dir, "run")
		ready := filepath.Join(dir, "ready")
		args := append(append([]string{}, names...), "--timeout="+timeout.String(), "--ready-file="+ready,
			"--", "sh", "-c", "trap '' HUP USR1 USR2 WINCH; : > $0.up; exec sleep 300", filepath.Join(dir, "%n"))
		cmd, done := startRun(t, dir, rundir, nil, names, args...)
		waitForFile(t, ready)
		// Each node ignores them once it has said so.
		for _, n := range names {
			waitForFile(t, filepath.Join(dir, n+".up"))
		}
		pid := cmd.Process.Pid
		for i := 0; i < signals; i++ {
			syscall.Kill(pid, storm[i%len(storm)])
		}
		mustOK(t, syscall.Kill(pid, syscall.SIGTERM))
		// --timeout, plus the time to start the stop of 20 nodes after
		// the signals queued before the TERM.
		code := waitRunExit(t, cmd, done, dir, timeout+20*time.Second)
		if code != 0 {
			errs, _ := os.ReadFile(filepath.Join(dir, "run.err"))
			t.Errorf("run %d: exit %d; want 0\n%s", run, code, errs)
		}
		allUnlocked(t, rundir, names)
		if t.Failed() {
			return
		}
	}
}

// A notify socket whose reader never reads (its queue full) does not
// delay the run: it is ready, and TERM stops it, all the same.
func TestRunNotifyReaderNeverReads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rundir := filepath.Join(dir, "run")
	sock := filepath.Join(dir, "notify.sock")
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	mustOK(t, err)
	defer unix.Close(fd)
	mustOK(t, unix.Bind(fd, &unix.SockaddrUnix{Name: sock}))
	// Fill its queue: every sendto to it now blocks, unless non-blocking.
	w, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	mustOK(t, err)
	defer unix.Close(w)
	for i := 0; ; i++ {
		err := unix.Sendto(w, []byte("FILL=1"), unix.MSG_DONTWAIT, &unix.SockaddrUnix{Name: sock})
		if errors.Is(err, unix.EAGAIN) {
			break
		}
		mustOK(t, err)
		if i > 1<<20 {
			t.Fatal("the socket's queue never filled")
		}
	}
	names := []string{"w1", "w2"}
	ready := filepath.Join(dir, "ready")
	cmd, done := startRun(t, dir, rundir, []string{"NOTIFY_SOCKET=" + sock}, names,
		"w1", "w2", "--timeout=5s", "--ready-file="+ready, "--", "sleep", "300")
	// READY=1 goes to the socket as the ready file is made.
	waitForFile(t, ready)
	mustOK(t, syscall.Kill(cmd.Process.Pid, syscall.SIGTERM))
	if code := waitRunExit(t, cmd, done, dir, 25*time.Second); code != 0 {
		errs, _ := os.ReadFile(filepath.Join(dir, "run.err"))
		t.Errorf("exit %d; want 0\n%s", code, errs)
	}
	allUnlocked(t, rundir, names)
}
