package pidfile

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/multi-launcher/multi/internal/safefs"
)

// ErrAlreadyRunning is matched (with [errors.Is]) by the error [Acquire] and
// [RemoveStale] return when another process holds the pidfile's lock.
var ErrAlreadyRunning = errors.New("already running")

// ErrBadPidfile is matched by errors about a pidfile that is not a regular
// file, or whose text is not a valid pid.
var ErrBadPidfile = errors.New("bad pidfile")

// A HeldError reports that a live process holds a pidfile's lock.
type HeldError struct {
	Path string
	// PID is the holder, from the kernel; 0 when it cannot be seen from here.
	PID int
}

func (e *HeldError) Error() string {
	if e.PID <= 0 {
		return "already running (lock held by a process in another pid namespace)"
	}
	return "already running (pid " + strconv.Itoa(e.PID) + ")"
}

// Is makes errors.Is(err, ErrAlreadyRunning) true.
func (e *HeldError) Is(target error) bool { return target == ErrAlreadyRunning }

// ErrForeignLock is matched by a [*ForeignError].
var ErrForeignLock = errors.New("locked, but not by a node")

// A ForeignError reports a pidfile locked by something that is not a node
// (see [Foreign]): its holder is never taken for the node nor signalled.
type ForeignError struct {
	Path string
	// PID is the locker as the kernel names it: -1 for an OFD lock, 0 for
	// a process in another pid namespace.
	PID int
	// Kind describes the lock: "read lock", "OFD write lock", "write lock
	// on bytes 0-9".
	Kind string
}

func (e *ForeignError) Error() string {
	who := "pid " + strconv.Itoa(e.PID)
	switch {
	case e.PID < 0:
		who = "a process F_GETLK cannot name"
	case e.PID == 0:
		who = "a process in another pid namespace"
	}
	return "pidfile " + e.Path + ": " + e.Kind + " held by " + who + ", not a node's lock (not signalled)"
}

// Is makes errors.Is(err, ErrForeignLock) true.
func (e *ForeignError) Is(target error) bool { return target == ErrForeignLock }

// OFD reports whether the lock is an OFD lock, which may be another
// multi's brief lock, let go within moments.
func (e *ForeignError) OFD() bool { return e.PID < 0 }

// An UnsafeFolderError is a folder that others than root and this user
// can write to (owned by another user, or group- or world-writable, a
// sticky one too), refused as the folder of a pidfile (and by package
// multi as that of a record or logfile) unless it was accepted
// (--allow-shared-folders: package multi's Cluster.AllowSharedFolders).
// Errors wrap it as a *UnsafeFolderError: test with [errors.As]. Its
// definition, in an internal package that go doc does not show, is:
//
//	type UnsafeFolderError struct {
//		Path string
//		UID  int         // the folder's owner
//		Mode fs.FileMode // the folder's mode
//	}
//
//	// Error returns "folder PATH (owner uid UID, mode MODE) can be written
//	// by others than root and this user (uid EUID); refusing it
//	// (--allow-shared-folders accepts it)".
//	func (e *UnsafeFolderError) Error() string
type UnsafeFolderError = safefs.UnsafeFolderError

// An UnsafeLinkError is a symbolic link on the way to a file that someone
// other than root or this user could have planted or swapped; it is not
// followed. The errors of this package's functions, and of package
// multi's verbs, wrap it as a *UnsafeLinkError: test with [errors.As].
// Its definition, in an internal package that go doc does not show, is:
//
//	type UnsafeLinkError struct {
//		Link string // the link's path
//		Why  string // who could plant or swap it: "owned by uid 1000, who could point it anywhere"
//	}
//
//	// Error returns "folder LINK is a symbolic link WHY; not followed".
//	func (e *UnsafeLinkError) Error() string
type UnsafeLinkError = safefs.UnsafeLinkError

// describeOpenErr names the pidfile in an error from opening it, and
// tells a planted link or directory (ErrBadPidfile) from any other error.
func describeOpenErr(path string, err error) error {
	var le *safefs.UnsafeLinkError
	var fe *safefs.UnsafeFolderError
	if errors.As(err, &le) || errors.As(err, &fe) {
		return fmt.Errorf("%w: %s: %w", ErrBadPidfile, path, err)
	}
	if safefs.IsSymlinkErr(err) {
		return fmt.Errorf("%w: %s is a symbolic link (not followed)", ErrBadPidfile, path)
	}
	if safefs.IsDirErr(err) {
		return fmt.Errorf("%w: %s is a directory", ErrBadPidfile, path)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return fmt.Errorf("pidfile %s: %w", path, pe.Err)
	}
	return fmt.Errorf("pidfile %s: %w", path, err)
}
