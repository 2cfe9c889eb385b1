//go:build unix

package pidfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/multi-launcher/multi/nodes/pidfile"
)

// A Go node started by multi --self-lock owns the pidfile multi names in
// its environment; a program multi did not start is told so.
func TestOwnFromEnv(t *testing.T) {
	if pidfile.EnvPidfile != "MULTI_PIDFILE" || pidfile.EnvPidfileFD != "MULTI_PIDFILE_FD" {
		t.Fatalf("EnvPidfile %q, EnvPidfileFD %q: node programs read MULTI_PIDFILE and MULTI_PIDFILE_FD",
			pidfile.EnvPidfile, pidfile.EnvPidfileFD)
	}
	t.Setenv(pidfile.EnvPidfile, "")
	if _, err := pidfile.OwnFromEnv(); !errors.Is(err, pidfile.ErrNoPidfile) {
		t.Fatalf("OwnFromEnv without $%s: %v; want ErrNoPidfile", pidfile.EnvPidfile, err)
	}
	path := filepath.Join(t.TempDir(), "run", "w1.pid")
	t.Setenv(pidfile.EnvPidfile, path)
	l, err := pidfile.OwnFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if l.Path() != path || l.File() == nil {
		t.Errorf("lock of %s, file %v; want %s, open", l.Path(), l.File(), path)
	}
	if info, err := pidfile.Inspect(path); err != nil || info.State != pidfile.Running || info.PID != os.Getpid() {
		t.Errorf("Inspect after OwnFromEnv: %+v, %v; want running, this process", info, err)
	}
}

// A Handle tests the lock of the file it opened: once the path names
// another file, SameFile says so.
func TestHandleSameFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "w1.pid")
	if err := os.WriteFile(path, []byte("4242\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := pidfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if h.Path() != path || !h.SameFile() {
		t.Fatalf("handle of %s, same file %v; want %s, true", h.Path(), h.SameFile(), path)
	}
	if state, pid, err := h.Holder(); state != pidfile.Stale || pid != 0 || err != nil {
		t.Errorf("Holder of an unlocked pidfile: %v %d %v; want stale", state, pid, err)
	}
	other := filepath.Join(dir, "new")
	os.WriteFile(other, []byte("4343\n"), 0o644)
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	if h.SameFile() {
		t.Errorf("SameFile after the path was replaced: true; want false")
	}
}

// A pidfile opened for a child to lock is created, not locked, and names
// its folder and name for the child; one this process holds is refused.
func TestOpenForChild(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run", "w1.pid")
	c, err := pidfile.OpenForChild(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.FD() <= 2 || c.DirFD() <= 2 || c.Name() != "w1.pid" || c.Path() != path {
		t.Errorf("ForChild: fd %d, folder fd %d, name %q, path %q", c.FD(), c.DirFD(), c.Name(), c.Path())
	}
	if pid, err := c.Holder(); pid != 0 || err != nil {
		t.Errorf("Holder before any child locked it: %d, %v; want 0", pid, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("pidfile made for the child: %v, %v; want mode 0600", st, err)
	}
	l, err := pidfile.Acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	var held *pidfile.HeldError
	if _, err := pidfile.OpenForChild(path); !errors.As(err, &held) || held.PID != os.Getpid() {
		t.Errorf("OpenForChild of a pidfile this process holds: %v; want a HeldError naming it", err)
	}
}
