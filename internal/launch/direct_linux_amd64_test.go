//go:build linux && amd64

package launch

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// directAvailable reports whether spawnDirect can start nodes here.
func directAvailable() bool {
	_, _, ok := nofileFor()
	return ok
}

// The lock the child takes survives its exec although the launcher had
// another descriptor of the pidfile open when it forked: the child closes
// its copies of every descriptor before it locks (a POSIX lock is dropped
// when its process closes any descriptor of the file, close-on-exec too).
func TestSpawnDirectLockSurvivesOtherDescriptors(t *testing.T) {
	n := forkTestNode(t, "w1", "sleep", "300")
	other, err := os.OpenFile(n.PidFile, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	before := directTaken.Load()
	ch, err := Spawn(context.Background(), nil, n, os.Environ(), 0)
	if err != nil {
		t.Fatal(err)
	}
	killNode(t, ch)
	if directTaken.Load() == before {
		t.Fatal("not forked directly")
	}
	if info, err := pidfile.Inspect(n.PidFile); err != nil || info.State != pidfile.Running || info.PID != ch.pid {
		t.Fatalf("Inspect: %+v, %v; want held by %d", info, err, ch.pid)
	}
}

// A program the child cannot exec, after it took the lock (a file marked
// executable that is no program): the start fails as the step's would
// (command not executable, the program named), and the pidfile the child
// wrote is removed again.
func TestSpawnDirectExecFailureRemovesPidfile(t *testing.T) {
	dir := t.TempDir()
	prog := dir + "/notaprogram"
	if err := os.WriteFile(prog, []byte{0x7f, 'X', 0, 0}, 0o755); err != nil {
		t.Fatal(err)
	}
	bothPaths(t, func(t *testing.T) {
		n := forkTestNode(t, "w1", prog)
		ch, err := Spawn(context.Background(), nil, n, os.Environ(), 0)
		if err == nil {
			killNode(t, ch)
			t.Fatal("started")
		}
		if !errors.Is(err, ErrCommandNotExecutable) || !strings.Contains(err.Error(), strconv.Quote(prog)) ||
			!strings.Contains(err.Error(), syscall.ENOEXEC.Error()) {
			t.Errorf("Spawn: %v; want %v naming %s (%v)", err, ErrCommandNotExecutable, prog, syscall.ENOEXEC)
		}
		if _, err := os.Lstat(n.PidFile); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("pidfile left: %v", err)
		}
	})
}

// A lock held by a running node: the child finds it busy and the exec
// step, which looks at the holder, refuses the start with the holder's
// pid, the pidfile untouched.
func TestSpawnDirectHeldLockFallsBackToStep(t *testing.T) {
	n := forkTestNode(t, "w1", "sleep", "300")
	first, err := Spawn(context.Background(), nil, n, os.Environ(), 0)
	if err != nil {
		t.Fatal(err)
	}
	killNode(t, first)
	text, _ := os.ReadFile(n.PidFile)
	ch, err := Spawn(context.Background(), nil, n, os.Environ(), 0)
	if err == nil {
		killNode(t, ch)
		t.Fatal("a second instance started")
	}
	var held *pidfile.HeldError
	if !errors.As(err, &held) || held.PID != first.pid {
		t.Fatalf("Spawn: %v; want held by %d", err, first.pid)
	}
	if now, _ := os.ReadFile(n.PidFile); string(now) != string(text) {
		t.Errorf("pidfile %q, was %q", now, text)
	}
}

// The pidfile removed (by a concurrent multi's cleanup, say) after the
// launcher opened it and before the child locked it: the child, finding
// its folder names another file or none, lets go, and the exec step
// starts the node on the file at the path, as Acquire's retry does. A
// lock on the removed file would be no node's lock.
func TestSpawnDirectPidfileReplacedBeforeLock(t *testing.T) {
	n := forkTestNode(t, "w1", "sleep", "300")
	beforeDirectFork = func(n nodes.Node) { os.Remove(n.PidFile) }
	defer func() { beforeDirectFork = nil }()
	before := directTaken.Load()
	ch, err := Spawn(context.Background(), nil, n, os.Environ(), 0)
	if err != nil {
		t.Fatal(err)
	}
	killNode(t, ch)
	if directTaken.Load() != before {
		t.Error("the child kept the lock of the removed file")
	}
	if info, err := pidfile.Inspect(n.PidFile); err != nil || info.State != pidfile.Running || info.PID != ch.pid {
		t.Fatalf("Inspect: %+v, %v; want held by %d", info, err, ch.pid)
	}
}
