package pidfile

import (
	"errors"
	"os"

	"github.com/multi-launcher/multi/internal/safefs"
)

// Environment variables through which multi hands a node its pidfile
// (nodes.EnvNode hands it its name). They belong here because a node that
// owns its pidfile (see [OwnFromEnv]) is a matter of the lock: a Go node
// needs only this package to take it.
const (
	// EnvPidfile holds the absolute path of the node's pidfile.
	EnvPidfile = "MULTI_PIDFILE"
	// EnvPidfileFD holds the descriptor of the pidfile locked for the node
	// by multi's exec step; it is not set for a node that locks its own.
	EnvPidfileFD = "MULTI_PIDFILE_FD"
)

// ErrNoPidfile is returned by [OwnFromEnv] when $MULTI_PIDFILE is not set:
// the program was not started by multi.
var ErrNoPidfile = errors.New("nodes: $" + EnvPidfile + " is not set")

// OwnFromEnv makes the calling program own the pidfile multi handed it in
// $MULTI_PIDFILE, for the rest of its life: it takes the lock (see
// [Acquire]; another live instance makes it fail with [ErrAlreadyRunning]
// and that instance's pid) and writes its pid. Call [Lock.Release] on a
// clean exit to remove the pidfile; on a crash the kernel drops the lock
// and the file is left stale, which multi knows to ignore.
//
// This is the node's side of multi's self-locking mode (multi start
// --self-lock), in which multi waits for the node to take its lock. It
// works as well when multi's exec step has locked the pidfile already:
// the lock is the process's either way (see the package doc).
//
// The pidfile must not be opened and closed elsewhere in the program but
// through this package (see the package doc).
func OwnFromEnv() (*Lock, error) {
	path := os.Getenv(EnvPidfile)
	if path == "" {
		return nil, ErrNoPidfile
	}
	// A pidfile folder others can write to, if multi accepted it
	// (--allow-shared-folders).
	safefs.AcceptSharedFromEnv()
	return Acquire(path)
}
