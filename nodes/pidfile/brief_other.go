//go:build unix && !linux

package pidfile

import "os"

// briefLock is a POSIX lock where there are no OFD locks: its holder can be
// taken for a node for the moment it is held.
func briefLock(f *os.File) error { return setlk(f) }
