package pidfile

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/multi-launcher/multi/internal/safefs"
)

// A Lock is a pidfile locked by the calling process. The lock lasts until
// [Lock.Release] or [Lock.Close], or until the process exits or execs a
// program that closes the descriptor; the kernel drops it at death,
// SIGKILL included.
type Lock struct {
	f    *os.File
	path string
}

// Acquire creates the pidfile's folders if needed, opens the pidfile without
// following a symbolic link, takes a POSIX write lock on the whole file
// without waiting, and writes the caller's pid to it. When another live
// process holds the lock, the error is a [*HeldError] (matching
// [ErrAlreadyRunning]) and the file is left as it was.
func Acquire(path string) (*Lock, error) {
	unlock := lockPath(path)
	defer unlock()
	if owned(path) {
		return nil, &HeldError{Path: path, PID: os.Getpid()}
	}
	f, err := lockFile(path, os.Getpid())
	if err != nil {
		return nil, err
	}
	testHoldLock()
	if err := f.Truncate(0); err != nil {
		return nil, unlinkClose(f, path, fmt.Errorf("pidfile %s: cannot truncate it: %w", path, safefs.BareErr(err)))
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		return nil, unlinkClose(f, path, fmt.Errorf("pidfile %s: cannot write the pid: %w", path, safefs.BareErr(err)))
	}
	return &Lock{f: f, path: path}, nil
}

// lockFile opens path and takes its lock for the process pid, retrying
// while the holder is a process that is still about to write its pid, or
// another multi's brief OFD lock, and while the path is replaced under it
// (FreeBSD's flopen does the same). The file is created 0600: another user
// who cannot open it cannot lock it either.
func lockFile(path string, pid int) (*os.File, error) {
	t0 := time.Now()
	for try := 0; ; try++ {
		f, err := openPidfile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		if !claimHeld(f) {
			// Locked by this process already: f is parked, not closed.
			closeFile(f)
			return nil, &HeldError{Path: path, PID: pid}
		}
		if err := safefs.SetBlocking(f); err != nil {
			closeFile(f)
			return nil, fmt.Errorf("pidfile %s: %w", path, err)
		}
		err = setlk(f)
		if errors.Is(err, errWouldBlock) {
			err := whyBusy(f, path, try >= lockTries || time.Since(t0) > BriefWait)
			closeFile(f)
			if err != nil {
				return nil, err
			}
			testMarkBrief()
			backoff(try)
			continue
		}
		if err != nil {
			closeFile(f)
			return nil, fmt.Errorf("pidfile %s: lock: %w", path, err)
		}
		h := &Handle{f: f, path: path}
		if !h.SameFile() {
			// Removed or replaced between our open and our lock.
			closeFile(f)
			continue
		}
		markLocked(f)
		return f, nil
	}
}

// lockTries is how many times a start tries a lock that a settling
// holder keeps (see [whyBusy]), within [BriefWait].
const lockTries = 200

// whyBusy says why the lock on f, the pidfile at path, could not be
// taken: a [*HeldError] or [*ForeignError] to give up with, or nil to try
// again soon. A holder whose pid is in the file is a settled instance. Any
// other node holder is another starter about to write its pid; an OFD lock
// may be a multi removing a stale file. Both let go or settle within
// moments (until over). Any other lock is not a node's.
func whyBusy(f *os.File, path string, over bool) error {
	info, err := (&Handle{f: f, path: path}).Snapshot()
	if err != nil {
		return err
	}
	var fe *ForeignError
	if errors.As(info.LockErr, &fe) && (!fe.OFD() || over) {
		return fe
	}
	if info.State == Elsewhere || (info.State == Running && (info.FilePID == info.PID || over)) {
		return &HeldError{Path: path, PID: info.PID}
	}
	return nil
}

// File returns the locked file. Its descriptor must stay open, in this
// process or in the program it execs, for as long as the lock should last.
func (l *Lock) File() *os.File { return l.f }

// Path returns the pidfile's path.
func (l *Lock) Path() string { return l.path }

// Release removes the pidfile, if it is still the locked file, and then
// closes it, which drops the lock. Unlinking before closing means no other
// process can lock the old file and find it gone.
func (l *Lock) Release() error {
	unlock := lockPath(l.path)
	defer unlock()
	return unlinkClose(l.f, l.path, nil)
}

// Close drops the lock and leaves the file in place (stale).
func (l *Lock) Close() error {
	unlock := lockPath(l.path)
	defer unlock()
	return closeFile(l.f)
}
