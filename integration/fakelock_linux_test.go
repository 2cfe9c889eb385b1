package integration

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// heldLocks keeps fakenode's -lock files open, and so their locks held.
var heldLocks []*os.File

// takeLock takes a lock on path that is not a node's: kind "read" (a POSIX
// read lock on the whole file), "ofd" (an OFD write lock on the whole
// file) or "range" (a POSIX write lock on byte 0 only).
func takeLock(path, kind string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	lk := &unix.Flock_t{Type: unix.F_WRLCK}
	cmd := unix.F_SETLK
	switch kind {
	case "read":
		lk.Type = unix.F_RDLCK
	case "ofd":
		cmd = unix.F_OFD_SETLK
	case "range":
		lk.Len = 1
	default:
		return fmt.Errorf("unknown -lock-kind %q", kind)
	}
	if err := unix.FcntlFlock(f.Fd(), cmd, lk); err != nil {
		f.Close()
		return err
	}
	heldLocks = append(heldLocks, f)
	return nil
}
