package multi_test

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
)

// Run, called as a library, gives the calling process back as it found
// it (not a child subreaper, SIGPIPE not ignored, so that orphans it
// adopts later are not left unreaped and its children do not inherit
// SIGPIPE ignored), and says why a run failed with errors a caller can
// test: a missing program (127), one not executable (126), a duplicate
// set (1), a node that exited (its code), each with the node's results.
func TestRunLibraryRestoresAndTypesErrors(t *testing.T) {
	if !testutil.InChild(t, "TestRunLibraryRestoresAndTypesErrors", "MULTI_TEST_RUN_LIBRARY") {
		return
	}
	subreaper := func() int32 {
		var v int32
		if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&v)), 0, 0, 0); err != nil {
			if errors.Is(err, unix.EINVAL) && testutil.Emulator() != "" {
				// qemu-user answers EINVAL to both subreaper calls: Run
				// then goes on without (its fallback, tested here), and
				// the caller cannot have been left a subreaper.
				return 0
			}
			t.Fatal(err)
		}
		return v
	}
	if subreaper() != 0 || signal.Ignored(syscall.SIGPIPE) {
		t.Fatal("the test process is a subreaper, or ignores SIGPIPE, before any run")
	}
	rundir := t.TempDir()
	notExec := filepath.Join(rundir, "not-exec")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mk := func(name string, cmd ...string) []nodes.Node {
		ns, err := nodes.Spec{Names: []string{name}, RunDir: rundir, Command: cmd}.Nodes()
		if err != nil {
			t.Fatal(err)
		}
		return ns
	}
	dup := mk("d1", "sleep", "300")
	// A node running already (started, and left, by Start) is not the
	// run's: the run fails on it.
	running := mk("r1", "sleep", "300")
	before := &multi.Cluster{Nodes: running, RunDir: rundir, Detach: true}
	if _, err := before.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { before.Kill(context.Background(), multi.StopOptions{}) })
	for _, c := range []struct {
		name    string
		nodes   []nodes.Node
		code    int
		is      error
		outcome multi.Outcome
	}{
		{"missing", mk("m1", filepath.Join(rundir, "no-such-program")), 127, multi.ErrCommandNotFound, multi.Failed},
		{"not-executable", mk("x1", notExec), 126, multi.ErrCommandNotExecutable, multi.Failed},
		{"duplicate", append(dup, dup...), 1, multi.ErrDuplicateNode, multi.Failed},
		{"exits", mk("e1", "sh", "-c", "exit 3"), 3, nil, multi.Failed},
		{"running", running, 1, multi.ErrAlreadyRunning, multi.AlreadyRunning},
	} {
		code, err := (&multi.Cluster{Nodes: c.nodes, RunDir: rundir}).Run(context.Background(), multi.RunOptions{})
		var re *multi.RunError
		switch {
		case code != c.code || !errors.As(err, &re) || re.Code != c.code || re.ExitCode() != c.code:
			t.Errorf("%s: Run = %d, %v; want %d and a *RunError with that code", c.name, code, err, c.code)
		case c.is != nil && !errors.Is(err, c.is):
			t.Errorf("%s: %v; want errors.Is %v", c.name, err, c.is)
		case re.Node != c.nodes[0].Name || len(re.Results) != len(c.nodes) || re.Results[0].Outcome != c.outcome:
			t.Errorf("%s: node %q, results %+v; want %s named, each node's result, %s", c.name, re.Node, re.Results, c.nodes[0].Name, c.outcome)
		}
		if subreaper() != 0 {
			t.Errorf("%s: the caller is left a child subreaper", c.name)
		}
		if signal.Ignored(syscall.SIGPIPE) {
			t.Errorf("%s: the caller is left ignoring SIGPIPE", c.name)
		}
	}
}
