//go:build unix && !linux

package safefs

import (
	"errors"

	"golang.org/x/sys/unix"
)

// oPath opens the folders of a walk; without O_PATH, for reading.
const oPath = unix.O_RDONLY

// openFast has no openat2 here: the walk does it all.
func openFast(path string) (fd int, ok bool) { return -1, false }

// Exchange would swap two files in one step: not here (errors.ErrUnsupported).
func (d *Folder) Exchange(a, b string) error { return errors.ErrUnsupported }

// RenameNew would rename without replacing: not here (errors.ErrUnsupported).
func (d *Folder) RenameNew(old, new string) error { return errors.ErrUnsupported }
