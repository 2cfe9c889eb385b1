//go:build unix && !linux

package pidfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// briefLock is a POSIX lock where there are no OFD locks: its holder can be
// taken for a node for the moment it is held.
func briefLock(f *os.File) error { return setlk(f) }

// briefUnlock lets go of the brief lock on f, leaving f open.
func briefUnlock(f *os.File) error {
	lk := wholeFile()
	lk.Type = unix.F_UNLCK
	return unix.FcntlFlock(f.Fd(), unix.F_SETLK, lk)
}
