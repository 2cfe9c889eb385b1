package pidfile

import (
	"os"
	"sync"
)

// fileID names a file by its device and inode: two paths, or two
// descriptors, of one file have the same.
type fileID struct{ dev, ino uint64 }

// A heldFile is a file this process has locked, or is locking: the
// lock's own descriptor, and the other descriptors of the same file
// closed meanwhile, which stay open until the lock is let go (see the
// package doc).
type heldFile struct {
	own     *os.File
	mu      sync.Mutex // guards parked, locked and dropped
	parked  []*os.File
	locked  bool // the lock is taken (not only claimed)
	dropped bool // own is being closed: the lock is let go
}

// holds reports whether the lock is this process's now. e.mu must be held.
func (e *heldFile) holds() bool { return e.locked && !e.dropped }

// The registry of this process's own locks, by file. A descriptor of a
// file is closed under heldMu read-locked (closeFile), and a lock is
// registered under heldMu locked, before it is taken (claimHeld): so no
// close of another descriptor can run between the registration and the
// lock and drop it.
var (
	heldMu sync.RWMutex
	held   = map[fileID]*heldFile{}
)

// lookupHeld returns the entry of f's file, or nil. heldMu must be held.
func lookupHeld(f *os.File) (fileID, *heldFile) {
	if len(held) == 0 {
		return fileID{}, nil // the common case, a process holding no lock: no fstat
	}
	id, ok := fileIDOf(f)
	if !ok {
		return fileID{}, nil
	}
	return id, held[id]
}

// claimHeld registers f's file as locked by this process, before the
// lock is taken. It reports false, registering nothing, when this process
// holds (or is taking) that file's lock already, through f or another
// descriptor: a second lock of its own would be no lock at all.
func claimHeld(f *os.File) bool {
	id, ok := fileIDOf(f)
	if !ok {
		return true
	}
	heldMu.Lock()
	defer heldMu.Unlock()
	if held[id] != nil {
		return false
	}
	held[id] = &heldFile{own: f}
	return true
}

// markLocked records that the lock claimed for f (see claimHeld) is
// taken.
func markLocked(f *os.File) {
	heldMu.RLock()
	defer heldMu.RUnlock()
	if _, e := lookupHeld(f); e != nil && e.own == f {
		e.mu.Lock()
		e.locked = true
		e.mu.Unlock()
	}
}

// ownFile reports whether f is a descriptor of a file whose lock this
// process holds. F_GETLK never shows a process its own lock, so the lock
// tests ask this first.
func ownFile(f *os.File) bool {
	heldMu.RLock()
	defer heldMu.RUnlock()
	_, e := lookupHeld(f)
	if e == nil {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.holds()
}

// ownAt returns the locked descriptor of the file at path, if this
// process holds its lock, or nil. Used before an open, so that no second
// descriptor of the file is opened at all (one opened anyway, the path
// swapped meanwhile, is parked by closeFile).
func ownAt(path string) *os.File {
	heldMu.RLock()
	defer heldMu.RUnlock()
	if len(held) == 0 {
		return nil
	}
	id, ok := fileIDAt(path)
	if !ok {
		return nil
	}
	e := held[id]
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.holds() {
		return nil
	}
	return e.own
}

// closeFile is the one close of a pidfile's descriptor in this package.
// The lock's own descriptor lets go of the lock, then closes the other
// descriptors of the file parked with it. Any other descriptor of a file
// whose lock this process holds is not closed (that would drop the lock:
// see the package doc) but parked until the lock is let go.
func closeFile(f *os.File) error {
	heldMu.RLock()
	id, e := lookupHeld(f)
	if e == nil || e.own != f {
		defer heldMu.RUnlock()
		if e != nil {
			e.mu.Lock()
			defer e.mu.Unlock()
			if !e.dropped {
				e.parked = append(e.parked, f)
				return nil
			}
		}
		return f.Close()
	}
	heldMu.RUnlock()
	e.mu.Lock()
	e.dropped = true
	parked := e.parked
	e.parked = nil
	e.mu.Unlock()
	err := f.Close()
	for _, p := range parked {
		p.Close()
	}
	// Only now may the file be locked anew: every descriptor of ours is
	// closed, and a close still under way holds heldMu read-locked.
	heldMu.Lock()
	if held[id] == e {
		delete(held, id)
	}
	heldMu.Unlock()
	return err
}
