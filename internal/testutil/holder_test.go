//go:build unix

package testutil_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

func TestMain(m *testing.M) {
	testutil.ServeRoles()
	os.Exit(m.Run())
}

// Holder names another process's lock, and never this process's own nor
// a lock nobody holds: the tests' cleanups kill what it names.
func TestHolder(t *testing.T) {
	dir := t.TempDir()
	own := filepath.Join(dir, "own.pid")
	l, err := pidfile.Acquire(own)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if pid := testutil.Holder(own); pid != 0 {
		t.Errorf("Holder of this process's own lock = %d, want 0", pid)
	}
	if pid := testutil.Holder(filepath.Join(dir, "absent.pid")); pid != 0 {
		t.Errorf("Holder of no pidfile = %d, want 0", pid)
	}

	other := filepath.Join(dir, "other.pid")
	cmd, stdin := testutil.StartHolder(t, other, testutil.HoldRelease)
	if pid := testutil.Holder(other); pid != cmd.Process.Pid {
		t.Errorf("Holder = %d, want the holder %d", pid, cmd.Process.Pid)
	}
	if got, want := testutil.SeenFromChild(t, own), fmt.Sprintf("running %d <nil>", os.Getpid()); got != want {
		t.Errorf("this process's lock seen from a child: %q, want %q", got, want)
	}
	stdin.Close()
	cmd.Wait()
	if pid := testutil.Holder(other); pid != 0 {
		t.Errorf("Holder after the holder released = %d, want 0", pid)
	}
}
