package pidfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/nodes/pidfile"
)

// A lock that is not a node's (here an OFD read lock, as another program
// could take) is Foreign: its ForeignError says it is OFD, which may be
// another multi's brief lock, so RemoveStale waits it out for BriefWait
// before it gives up, and removes nothing.
func TestForeignLock(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "w1.pid")
	if err := os.WriteFile(path, []byte("4242\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &unix.Flock_t{Type: unix.F_RDLCK}); err != nil {
		t.Skip("no OFD locks:", err)
	}
	info, err := pidfile.Inspect(path)
	var fe *pidfile.ForeignError
	if err != nil || info.State != pidfile.Foreign || !errors.As(info.LockErr, &fe) || !fe.OFD() || !errors.Is(info.LockErr, pidfile.ErrForeignLock) {
		t.Fatalf("Inspect: %+v, %v; want Foreign, an OFD ForeignError", info, err)
	}
	t0 := time.Now()
	err = pidfile.RemoveStale(path)
	if waited := time.Since(t0); !errors.Is(err, pidfile.ErrForeignLock) || waited < pidfile.BriefWait {
		t.Errorf("RemoveStale under a foreign OFD lock: %v after %s; want ErrForeignLock after BriefWait (%s)", err, waited, pidfile.BriefWait)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the pidfile after RemoveStale: %v; want it kept", err)
	}
}
