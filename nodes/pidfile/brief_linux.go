package pidfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// briefLock takes multi's own short-lived lock on the whole file: an OFD
// lock (F_OFD_SETLK), which F_GETLK reports with pid -1, so that no other
// multi takes its holder for a node and signals it. It conflicts with a
// node's POSIX lock like a POSIX lock would, and it belongs to f's open
// file description, not to the process (see the package doc).
func briefLock(f *os.File) error { return lockCmd(f, unix.F_OFD_SETLK) }

// briefUnlock lets go of the brief lock on f, leaving f open.
func briefUnlock(f *os.File) error {
	lk := wholeFile()
	lk.Type = unix.F_UNLCK
	return unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, lk)
}
