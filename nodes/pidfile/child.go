package pidfile

import (
	"os"
	"path/filepath"

	"github.com/multi-launcher/multi/internal/safefs"
)

// A ForChild is a pidfile opened, not locked, for a child process to
// lock before it execs its program: for a launcher that forks a node's
// process and has it lock the file without running Go code in it. The
// file is opened as [Acquire] opens it (its folders made, no link
// followed, only a regular file nobody planted, created 0600); the child
// then takes the lock (fcntl(2) F_SETLK on [ForChild.FD]: the lock is
// the child's own), checks that [ForChild.Name] in the folder open at
// [ForChild.DirFD] is still that file, truncates it and writes its pid.
// It must have closed every other descriptor of the file first: closing
// any of a process's descriptors of a file, at its exec too, drops its
// POSIX locks on it.
//
// Until [ForChild.Close], this process's other operations on the same
// path (Acquire, Inspect, RemoveStale, ...) wait.
type ForChild struct {
	f      *os.File
	dir    *safefs.Folder
	path   string
	unlock func()
}

// OpenForChild opens the pidfile at path for a child to lock. A file
// whose lock this process holds is refused with a [*HeldError]: the
// child could not take it.
func OpenForChild(path string) (*ForChild, error) {
	unlock := lockPath(path)
	if owned(path) {
		unlock()
		return nil, &HeldError{Path: path, PID: os.Getpid()}
	}
	f, d, err := openPidfileIn(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err == nil {
		if err = safefs.SetBlocking(f); err != nil {
			closeFile(f)
			d.Close()
		}
	}
	if err != nil {
		unlock()
		return nil, err
	}
	return &ForChild{f: f, dir: d, path: path, unlock: unlock}, nil
}

// FD is the pidfile's descriptor, for the child to lock.
func (c *ForChild) FD() int { return int(c.f.Fd()) }

// DirFD is the descriptor of the pidfile's folder.
func (c *ForChild) DirFD() int { return int(c.dir.File().Fd()) }

// Name is the pidfile's name in its folder.
func (c *ForChild) Name() string { return filepath.Base(c.path) }

// Path is the pidfile's path.
func (c *ForChild) Path() string { return c.path }

// Holder is the pid of the process that holds the file's lock as this
// process sees it (fcntl(2) F_GETLK on the open file), 0 if none: the
// child, once it has locked the file, when it did. Unlike [Inspect] it
// opens nothing.
func (c *ForChild) Holder() (int, error) {
	seen, err := getlk(c.f)
	if err != nil || !seen.locked || !seen.write {
		return 0, err
	}
	return seen.pid, nil
}

// Close closes the file and its folder in this process (the child's
// lock, its own, stays) and lets this process's other operations on the
// path go on.
func (c *ForChild) Close() error {
	err := closeFile(c.f)
	c.dir.Close()
	c.unlock()
	return err
}
