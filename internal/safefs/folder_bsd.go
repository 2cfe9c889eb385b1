//go:build unix && !linux

package safefs

import "golang.org/x/sys/unix"

// oPath opens the folders of a walk; without O_PATH, for reading.
const oPath = unix.O_RDONLY

// openFast has no openat2 here: the walk does it all.
func openFast(path string) (fd int, ok bool) { return -1, false }
