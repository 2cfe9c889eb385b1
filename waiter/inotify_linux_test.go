package waiter_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/multi-launcher/multi/waiter"
)

// inotifyCount counts this process's inotify instances.
func inotifyCount(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && l == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// With Notify, a target whose holder has a pidfd needs no fsnotify: while
// WaitEach waits on one, no inotify instance is made (closing one blocks
// the command's exit for milliseconds: docs/benchmarks.md, section 5). Not
// parallel: the other tests' watchers would be counted.
func TestWaitEachNotifyNoInotifyWithPidfds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "n.pid")
	h := hold(t, path)
	before := inotifyCount(t)
	in := make(chan waiter.Target, 1)
	in <- waiter.Target{Path: path, PID: h.cmd.Process.Pid}
	close(in)
	finish := mustBlock(t, func() error {
		_, err := waiter.WaitEach(t.Context(), in, waiter.Notify{Poll: waiter.Poll{First: time.Hour, Max: time.Hour}}, nil)
		return err
	})
	// mustBlock saw WaitEach still waiting: the target has arrived and
	// been watched by now (WaitEach takes it before its first wait).
	during := inotifyCount(t)
	h.stdin.Close()
	if err := finish(); err != nil {
		t.Fatal(err)
	}
	if during > before {
		t.Fatalf("%d inotify instances while waiting, %d before: fsnotify set up though the holder had a pidfd", during, before)
	}
}

// WaitAll waits as WaitEach does: with Notify and a holder that has a
// pidfd, no inotify instance either. Not parallel, as above.
func TestWaitAllNotifyNoInotifyWithPidfds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "n.pid")
	h := hold(t, path)
	before := inotifyCount(t)
	s := waiter.Notify{Poll: waiter.Poll{First: time.Hour, Max: time.Hour}}
	finish := mustBlock(t, func() error {
		return waiter.WaitAll(t.Context(), []waiter.Target{{Path: path}}, s, nil)
	})
	// mustBlock saw WaitAll still waiting: its targets were admitted
	// before its first wait.
	during := inotifyCount(t)
	h.stdin.Close()
	if err := finish(); err != nil {
		t.Fatal(err)
	}
	if during > before {
		t.Fatalf("%d inotify instances while waiting, %d before: fsnotify set up though the holder had a pidfd", during, before)
	}
}
