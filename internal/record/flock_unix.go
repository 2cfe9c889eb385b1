//go:build unix

package record

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// errBusy: a flock taken without waiting is held by another.
var errBusy = errors.New("busy")

// flock takes a flock(2) on f, shared or exclusive, without waiting. A
// flock belongs to the open file, so two in one process exclude each
// other as two processes do, and the kernel drops it when its holder dies.
func flock(f *os.File, exclusive bool) error {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
	if err == unix.EWOULDBLOCK {
		return errBusy
	}
	return err
}

// funlock lets go of f's flock.
func funlock(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// flockWorks: [flock] locks here.
const flockWorks = true
