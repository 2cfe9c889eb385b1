//go:build unix

package pidfile_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// A process that holds a pidfile's lock keeps it through every operation
// of the package on the same file, by its path or by another path to it:
// none opens and closes a second descriptor of it (which would drop the
// lock), and each sees the file held by this process.
func TestOwnLockSurvivesEveryOperation(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "w1.pid")
	l, err := pidfile.Acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	me := os.Getpid()
	held := func(err error) error {
		var he *pidfile.HeldError
		if !errors.As(err, &he) || he.PID != me {
			return fmt.Errorf("%v; want a HeldError naming pid %d", err, me)
		}
		return nil
	}
	running := func(st pidfile.State, pid int, err error) error {
		if err != nil || st != pidfile.Running || pid != me {
			return fmt.Errorf("%v %d %v; want running %d", st, pid, err, me)
		}
		return nil
	}
	dirs := pidfile.NewFolders()
	defer dirs.Close()
	ops := []struct {
		name string
		f    func(p string) error
	}{
		{"Inspect", func(p string) error {
			info, err := pidfile.Inspect(p)
			return running(info.State, info.PID, err)
		}},
		{"Open, Snapshot, Close", func(p string) error {
			h, err := pidfile.Open(p)
			if err != nil {
				return err
			}
			defer h.Close()
			info, err := h.Snapshot()
			return running(info.State, info.PID, err)
		}},
		{"OpenToRemove, RemoveIfStale, Close", func(p string) error {
			h, err := pidfile.OpenToRemove(p)
			if err != nil {
				return err
			}
			defer h.Close()
			return held(h.RemoveIfStale())
		}},
		{"Folders.OpenToRemove, Holder, Close", func(p string) error {
			h, err := dirs.OpenToRemove(p)
			if err != nil {
				return err
			}
			defer h.Close()
			return running(h.Holder())
		}},
		{"RemoveStale", func(p string) error { return held(pidfile.RemoveStale(p)) }},
		{"Acquire", func(p string) error {
			l2, err := pidfile.Acquire(p)
			if err == nil {
				l2.Close()
			}
			return held(err)
		}},
	}
	want := fmt.Sprintf("running %d <nil>", me)
	for _, p := range []string{path, filepath.Join(dir, "sub", "..", "w1.pid")} {
		for _, op := range ops {
			if err := op.f(p); err != nil {
				t.Errorf("%s(%s): %v", op.name, p, err)
			}
			if got := testutil.SeenFromChild(t, path); got != want {
				t.Fatalf("after %s(%s), another process sees %q; want %q: the lock was dropped", op.name, p, got, want)
			}
		}
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if got := testutil.SeenFromChild(t, path); got != "stopped 0 <nil>" {
		t.Fatalf("after Release, another process sees %q; want stopped", got)
	}
}
