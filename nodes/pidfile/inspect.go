package pidfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// BriefWait bounds how long multi waits for a lock that may be another
// multi's brief one (an OFD lock, or a node's exec step that has locked
// its pidfile but not yet written its pid) to go or to settle.
const BriefWait = 500 * time.Millisecond

// lockSeen is what F_GETLK reports about the lock that would stop a
// whole-file write lock.
type lockSeen struct {
	locked, write bool
	start, len    int64
	pid           int
}

// classify tells a node's lock (a POSIX write lock on the whole file) from
// any other.
func classify(l lockSeen, path string) (State, int, error) {
	switch {
	case !l.locked:
		return Stale, 0, nil
	case l.write && l.start == 0 && l.len == 0 && l.pid > 0:
		return Running, l.pid, nil
	case l.write && l.start == 0 && l.len == 0 && l.pid == 0:
		return Elsewhere, 0, nil
	}
	kind := "read lock"
	if l.write {
		kind = "write lock"
	}
	if l.pid < 0 {
		kind = "OFD " + kind
	}
	switch {
	case l.start != 0 && l.len == 0:
		kind += fmt.Sprintf(" on bytes %d to the end", l.start)
	case l.len != 0:
		kind += fmt.Sprintf(" on bytes %d-%d", l.start, l.start+l.len-1)
	}
	return Foreign, 0, &ForeignError{Path: path, PID: l.pid, Kind: kind}
}

// Inspect reports the state of the pidfile at path without changing it. An
// absent file is not an error. A symbolic link, a directory or any other
// non-regular file is, and so is a file this process cannot open.
func Inspect(path string) (Info, error) {
	unlock := lockPath(path)
	defer unlock()
	info := Info{Path: path}
	if owned(path) {
		info.State, info.PID, info.FilePID = Running, os.Getpid(), os.Getpid()
		return info, nil
	}
	h, err := openHandle(path)
	if errors.Is(err, fs.ErrNotExist) {
		return info, nil
	}
	if err != nil {
		return info, err
	}
	defer h.closeLocked()
	return h.Snapshot()
}

// Snapshot reports the lock on the open file, as [Inspect] does: who holds
// it, of what kind, and the pid the file's text names.
func (h *Handle) Snapshot() (Info, error) {
	info := Info{Path: h.path}
	if ownFile(h.f) {
		info.State, info.PID = Running, os.Getpid()
		info.FilePID, info.FileErr = h.readPID()
		return info, nil
	}
	l, err := getlk(h.f)
	if err != nil {
		return info, fmt.Errorf("pidfile %s: lock test: %w", h.path, err)
	}
	info.State, info.PID, info.LockErr = classify(l, h.path)
	info.FilePID, info.FileErr = h.readPID()
	return info, nil
}

// A Handle is a pidfile opened for reading, so that its lock can be tested
// again and again on the same file, even after it is unlinked or replaced.
// Close it before anything in this process locks or removes the same path.
type Handle struct {
	f    *os.File
	path string
	// rw: opened for writing too ([OpenToRemove]), which the brief OFD
	// write lock of [Handle.RemoveIfStale] needs.
	rw bool
	// dir, if not nil, is the folder it was opened in ([Folders]), where
	// its name is checked and unlinked; without it the folder is reached
	// again from / for that.
	dir *sharedFolder
	// borrowed: f is the descriptor of a lock this process holds, which
	// the handle never closes.
	borrowed bool
}

// Open opens the pidfile at path for lock tests. The error wraps
// [fs.ErrNotExist] when there is no pidfile.
func Open(path string) (*Handle, error) {
	unlock := lockPath(path)
	defer unlock()
	return openHandle(path)
}

// OpenToRemove opens the pidfile at path as [Open] does, but for writing
// too, so that [Handle.RemoveIfStale] can later remove it through the same
// open file. A pidfile this process may read but not write is opened for
// reading only, and RemoveIfStale then opens it again as [RemoveStale] does.
func OpenToRemove(path string) (*Handle, error) {
	unlock := lockPath(path)
	defer unlock()
	if h := ownHandle(path); h != nil {
		return h, nil
	}
	f, err := openPidfile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return openHandle(path)
	}
	if err != nil {
		return nil, err
	}
	return &Handle{f: f, path: path, rw: true}, nil
}

func openHandle(path string) (*Handle, error) {
	if h := ownHandle(path); h != nil {
		return h, nil
	}
	f, err := openPidfile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	return &Handle{f: f, path: path}, nil
}

// Path returns the path the handle was opened at.
func (h *Handle) Path() string { return h.path }

// Holder asks the kernel who holds the lock on the open file: Stale when
// nobody does, Running with the holder's pid, Elsewhere, or Foreign (a
// lock that is not a node's; see [Handle.Snapshot] for what it is).
func (h *Handle) Holder() (State, int, error) {
	if ownFile(h.f) {
		return Running, os.Getpid(), nil
	}
	l, err := getlk(h.f)
	if err != nil {
		return Stale, 0, fmt.Errorf("pidfile %s: lock test: %w", h.path, err)
	}
	state, pid, _ := classify(l, h.path)
	return state, pid, nil
}

// SameFile reports whether the path still names the file the handle has
// open.
func (h *Handle) SameFile() bool {
	if h.dir != nil {
		return h.dir.d.SameFile(filepath.Base(h.path), h.f)
	}
	a, err := h.f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(h.path)
	return err == nil && os.SameFile(a, b)
}

// readPID parses the pid on the file's first line (see parsePID).
func (h *Handle) readPID() (int, error) {
	var buf [32]byte
	n, err := readHead(h.f, buf[:])
	if err != nil && err != io.EOF {
		return 0, err
	}
	return parsePID(buf[:n])
}

// Close closes the handle. A descriptor of a file this process holds the
// lock of stays open until the lock is let go (see the package doc).
func (h *Handle) Close() error {
	unlock := lockPath(h.path)
	defer unlock()
	return h.closeLocked()
}

// closeLocked is Close, for a caller that has the path's turn already.
func (h *Handle) closeLocked() error {
	if h.borrowed {
		return nil
	}
	err := closeFile(h.f)
	if h.dir != nil {
		h.dir.unref()
		h.dir = nil
	}
	return err
}
