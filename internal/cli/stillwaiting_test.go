//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/testutil"
)

// A stopwait not on a terminal, without --timeout, that waits for a node
// ignoring TERM says on stderr what it still waits for, with the pid and
// how to end the wait; once the other node is down, it is not named.
func TestStopWaitSaysWhatItWaitsFor(t *testing.T) {
	after, every := stillWaitingAfter, stillWaitingEvery
	stillWaitingAfter, stillWaitingEvery = 50*time.Millisecond, 20*time.Millisecond
	t.Cleanup(func() { stillWaitingAfter, stillWaitingEvery = after, every })
	dir := t.TempDir()
	killLeftovers(t, dir, "deaf", "fine")
	if code, out, errs := runCLI(t, "start", "deaf", "--rundir", dir, "--", "sh", "-c", `trap "" TERM; echo up; exec sleep 300`); code != exitOK {
		t.Fatalf("start: exit %d, %q, %q", code, out, errs)
	}
	if code, out, errs := runCLI(t, "start", "fine", "--rundir", dir, "--", "sleep", "300"); code != exitOK {
		t.Fatalf("start: exit %d, %q, %q", code, out, errs)
	}
	deaf := holder(t, dir, "deaf")
	// The trap is set before the shell says up.
	testutil.PollUntil(t, "deaf to say up", func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "deaf.log"))
		return strings.Contains(string(b), "up\n")
	})
	var out, errs syncBuffer
	code := make(chan int, 1)
	go func() { code <- Run([]string{"multi", "stopwait", "deaf", "fine", "--rundir", dir}, &out, &errs) }()
	// fine goes down at once: once it has, each line names deaf alone.
	want := "for 1 of 2 to end: deaf (pid " + strconv.Itoa(deaf) + "); --timeout=DURATION would KILL what is left, Ctrl-C leaves them running\n"
	testutil.PollUntil(t, "stopwait to say it waits for deaf", func() bool { return strings.Contains(errs.String(), want) })
	for _, line := range strings.SplitAfter(errs.String(), "\n") {
		if line != "" && !strings.HasPrefix(line, "multi stopwait: still waiting after ") {
			t.Errorf("stderr line %q; want only what stopwait waits for", line)
		}
	}
	if err := syscall.Kill(deaf, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if c := <-code; c != exitOK {
		t.Errorf("stopwait: exit %d, %q, %q", c, out.String(), errs.String())
	}
}

// --group on a celery worker warns that the pool's children get the
// signal too; on another command it says nothing.
func TestGroupWarnsForCelery(t *testing.T) {
	dir := t.TempDir()
	killLeftovers(t, dir, "c1", "s1")
	celery := filepath.Join(t.TempDir(), "celery")
	if err := os.WriteFile(celery, []byte("#!/bin/sh\nexec sleep 300\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runCLI(t, "start", "c1", "--rundir", dir, "--", celery, "worker"); code != exitOK {
		t.Fatalf("start: exit %d, %q, %q", code, out, errs)
	}
	if code, out, errs := runCLI(t, "start", "s1", "--rundir", dir, "--", "sleep", "300"); code != exitOK {
		t.Fatalf("start: exit %d, %q, %q", code, out, errs)
	}
	code, out, errs := runCLI(t, "stopwait", "s1", "--group", "--rundir", dir)
	if code != exitOK || errs != "" {
		t.Errorf("stopwait --group s1: exit %d, %q, %q; want 0 and no warning", code, out, errs)
	}
	code, out, errs = runCLI(t, "stopwait", "c1", "--group", "--rundir", dir)
	if want := "multi stopwait: warning: --group signals c1's whole process group: a celery worker's prefork pool children get TERM too"; code != exitOK || !strings.HasPrefix(errs, want) {
		t.Errorf("stopwait --group c1: exit %d, %q, %q; want 0 and %q", code, out, errs, want)
	}
}
