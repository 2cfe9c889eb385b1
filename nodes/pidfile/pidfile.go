// Package pidfile creates, locks, inspects and removes pidfiles whose
// lock, not their text, says whether a process is alive.
//
// A pidfile holds a pid on its first line and is locked, with a POSIX
// record lock (fcntl F_SETLK) over the whole file, by its process for the
// whole of that process's life. The kernel drops the lock when the
// process dies, SIGKILL included, so a pidfile that nobody has locked is
// stale, whatever pid it names. Package pidfile owns that lock and what
// can be learned from it:
//
//   - [Acquire] takes it and returns a [Lock], whose [Lock.Release]
//     removes the file and lets go; [OwnFromEnv] does the same for a Go
//     program that multi started and that locks its own pidfile;
//   - [Inspect] asks the kernel who holds it (F_GETLK), as an [Info] in a
//     [State]; [Open] returns a [Handle] that asks again and again;
//   - [RemoveStale] removes a pidfile nobody holds, under a brief lock of
//     its own so that it never removes a live one ([OpenToRemove],
//     [Folders] and [OpenForChild] serve multi's own stop and start, not
//     a program that locks its own pidfile);
//   - the pid in the text ([Info.FilePID]) is only a hint.
//
// Pidfiles are opened without following a symbolic link that someone
// else could have planted (see Folders and links below). The locks are
// POSIX record locks on unix (lock_unix.go; multi's brief lock is an OFD
// lock on Linux, brief_linux.go); elsewhere every operation that locks
// fails with [errors.ErrUnsupported] (lock_other.go).
//
// # Folders and links
//
// Every folder of a pidfile (and of a node's record and logfile, which
// package multi opens the same way) is reached one element at a time
// from "/", never following a symbolic link that someone other than root
// or this user could have planted or swapped (an [UnsafeLinkError]; a
// link of root's or this user's, in a folder only they can write to, such
// as /var/run -> /run, is followed). The folder reached must be one that
// only root or this user can write to, else it is refused with an
// [UnsafeFolderError] unless it was accepted. A file in it is opened
// without following a link, never waiting on a FIFO, and only as a
// regular file of root or this user with one name.
//
// # The calling process's own locks
//
// POSIX locks belong to the process, not to a descriptor: closing any
// descriptor of a locked file, a second one opened just to test the lock,
// drops every lock the process holds on it, and F_GETLK never shows a
// process its own lock. A child made by fork does not inherit them; one
// that locks a descriptor it inherited owns the lock, and the lock lasts
// through execve as long as that descriptor stays open (so a launcher's
// child locks, clears close-on-exec, and execs the node). An OFD lock
// (F_OFD_SETLK, Linux) belongs to its open file description instead and is
// not dropped by closing another descriptor. So this package keeps a
// registry of the locks the process holds, by file (device and inode, as
// cmd/go's lockedfile does): an operation on a path that names such a
// file, by whatever path, reuses the lock's own descriptor instead of
// opening another; a descriptor opened anyway (the path swapped meanwhile)
// is not closed but kept until the lock is let go; and the lock tests
// report the file held by this process ([Running], the PID [os.Getpid]),
// so that no caller takes it for stale. Operations on one path take turns.
// A program must not open and close its own pidfile by other means than
// this package.
package pidfile

import (
	"bytes"
	"fmt"
	"strconv"
)

// State is what the kernel says about a pidfile.
type State int

const (
	// Absent: there is no pidfile.
	Absent State = iota
	// Stale: the pidfile exists but no process holds its lock, whatever
	// pid it names.
	Stale
	// Running: a process this one can see holds the lock; Info.PID is it.
	Running
	// Elsewhere: a whole-file POSIX write lock, a node's, is held by a
	// process this one cannot name: one in a pid namespace it cannot see
	// (the kernel reports pid 0). It must not be signalled.
	Elsewhere
	// Foreign: the pidfile is locked, but not the way a node locks it: a
	// read lock, an OFD lock (multi's own brief lock, or another
	// program's), or a lock on part of the file. Its holder is not the
	// node and is never signalled; Info.LockErr names it.
	Foreign
)

// stateNames are the states' words, as status prints them and JSON
// carries them: stable.
var stateNames = [...]string{Absent: "stopped", Stale: "stale", Running: "running", Elsewhere: "elsewhere", Foreign: "foreign"}

// String returns the state's word, as status prints it: "stopped" for
// Absent, "stale", "running", "elsewhere" or "foreign".
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// MarshalText writes the state's word ([State.String]); a state that has
// none is an error.
func (s State) MarshalText() ([]byte, error) {
	if s < 0 || int(s) >= len(stateNames) {
		return nil, fmt.Errorf("pidfile: no word for state %d", int(s))
	}
	return []byte(stateNames[s]), nil
}

// UnmarshalText reads a state's word.
func (s *State) UnmarshalText(b []byte) error {
	for i, name := range stateNames {
		if string(b) == name {
			*s = State(i)
			return nil
		}
	}
	return fmt.Errorf("pidfile: unknown state %q", b)
}

// maxPID is the largest pid Linux can hand out (PID_MAX_LIMIT on 64-bit).
const maxPID = 1 << 22

// Info is a snapshot of a pidfile: the kernel's view of its lock and the
// pid its text names.
type Info struct {
	Path  string
	State State
	// PID is the lock holder as the kernel names it; 0 unless Running.
	PID int
	// LockErr is a [*ForeignError] naming the locker when State is
	// Foreign, else nil.
	LockErr error
	// FilePID is the pid on the file's first line; 0 when the file is
	// absent or its text is not a valid pid (FileErr says why).
	FilePID int
	FileErr error
}

// Mismatch reports whether the file's text names another pid than the
// lock holder. The holder is the truth; the text is only a hint for tools
// that cannot ask the kernel.
func (i Info) Mismatch() bool { return i.State == Running && i.FilePID != i.PID }

// parsePID parses a pidfile's text: decimal digits and a newline on the
// first line, nothing else on it, a value from 2 to maxPID. Signs, spaces
// and missing newlines are refused rather than guessed at.
func parsePID(b []byte) (int, error) {
	line, _, ok := bytes.Cut(b, []byte("\n"))
	switch {
	case len(b) == 0:
		return 0, fmt.Errorf("%w: empty", ErrBadPidfile)
	case !ok:
		return 0, fmt.Errorf("%w: no newline after the pid", ErrBadPidfile)
	case len(line) == 0 || len(line) > 7:
		return 0, fmt.Errorf("%w: first line is not a pid", ErrBadPidfile)
	}
	pid := 0
	for _, c := range line {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: first line %q is not a pid", ErrBadPidfile, line)
		}
		pid = pid*10 + int(c-'0')
	}
	if pid < 2 || pid > maxPID || line[0] == '0' {
		return 0, fmt.Errorf("%w: pid %s out of range", ErrBadPidfile, line)
	}
	return pid, nil
}
