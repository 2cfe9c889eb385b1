package pidfile

import (
	"fmt"
	"os"
	"time"

	"github.com/multi-launcher/multi/internal/safefs"
)

// A Claim is a pidfile opened, as [Acquire] opens it, for a child process
// to lock: the launcher opens the file and forks, and the child takes the
// lock on the inherited descriptor and writes its own pid before it execs
// the node's command. The lock is the child's alone (a POSIX lock is
// its process's: see the package doc); the Claim itself holds none.
type Claim struct {
	f    *os.File
	path string
}

// OpenClaim creates the pidfile's folders if needed and opens the pidfile
// read-write, created 0600, without following a symbolic link (the same
// checks as [Acquire]). The caller hands [Claim.File]'s descriptor to the
// child and closes the Claim once the child is started.
func OpenClaim(path string) (*Claim, error) {
	if owned(path) {
		return nil, &HeldError{Path: path, PID: os.Getpid()}
	}
	f, err := openPidfile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if ownFile(f) {
		closeFile(f) // parked, not closed
		return nil, &HeldError{Path: path, PID: os.Getpid()}
	}
	if err := safefs.SetBlocking(f); err != nil {
		closeFile(f)
		return nil, fmt.Errorf("pidfile %s: %w", path, err)
	}
	return &Claim{f: f, path: path}, nil
}

// File returns the open pidfile.
func (c *Claim) File() *os.File { return c.f }

// Busy is called when the child found the lock taken, at the try-th
// attempt (from 0) of a start that began at t0. It returns a
// [*HeldError] or [*ForeignError] to give up with, or nil after a short
// pause when the holder is about to settle or let go (a starter that has
// not written its pid yet, another multi's brief lock): the caller then
// opens a new Claim and tries again, as [Acquire] would.
func (c *Claim) Busy(try int, t0 time.Time) error {
	if err := whyBusy(c.f, c.path, try >= lockTries || time.Since(t0) > BriefWait); err != nil {
		return err
	}
	testMarkBrief()
	backoff(try)
	return nil
}

// Close closes the pidfile. It waits for any lock this process holds on
// the same path to be let go first (see [Handle.Close]).
func (c *Claim) Close() error {
	unlock := lockPath(c.path)
	defer unlock()
	return closeFile(c.f)
}
