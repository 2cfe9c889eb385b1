package pidfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/multi-launcher/multi/internal/safefs"
)

// RemoveStale removes the pidfile at path if no process holds its lock. It
// locks the file itself first and checks that the path still names the
// locked file, so it can never remove the pidfile of a node that has just
// started. Its lock is a brief OFD lock (see briefLock), which no other
// multi mistakes for a node. Another multi's brief lock is waited out (up
// to [BriefWait]). An absent file is not an error; a file a node holds is
// a [*HeldError], and one locked otherwise a [*ForeignError].
func RemoveStale(path string) error {
	unlock := lockPath(path)
	defer unlock()
	if owned(path) {
		return &HeldError{Path: path, PID: os.Getpid()}
	}
	t0 := time.Now()
	for try := 0; ; try++ {
		f, err := openPidfile(path, os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		err = briefLock(f)
		if err == nil {
			testHoldLock()
			return unlinkClose(f, path, nil)
		}
		if !errors.Is(err, errWouldBlock) {
			closeFile(f)
			return fmt.Errorf("pidfile %s: lock: %w", path, err)
		}
		h := &Handle{f: f, path: path}
		info, herr := h.Snapshot()
		closeFile(f)
		var fe *ForeignError
		switch {
		case herr != nil:
			return herr
		case info.State == Running || info.State == Elsewhere:
			return &HeldError{Path: path, PID: info.PID}
		case errors.As(info.LockErr, &fe) && (!fe.OFD() || time.Since(t0) > BriefWait):
			return fe
		}
		// Let go since we tried, or another multi's brief lock: again.
		testMarkBrief()
		backoff(try)
	}
}

// RemoveIfStale is [RemoveStale] on the file h has open, so that a caller
// that has tested the lock on h need not open the pidfile again: it takes
// the same brief OFD lock on h's open file, checks that the path still
// names that file and unlinks it (in its folder reached without following
// an untrusted link), then lets go of the brief lock. h stays open.
//
// When the path names another file by then (a node that removed its own
// pidfile, a new instance's), or h was opened for reading only, the path is
// left to RemoveStale, which opens whatever it names now.
func (h *Handle) RemoveIfStale() error {
	// In a folder of Folders' the name is checked once, under the brief
	// lock, just before the unlink; otherwise here, and again by
	// unlinkSame in the folder it reaches.
	if !h.rw || (h.dir == nil && !h.SameFile()) {
		return RemoveStale(h.path)
	}
	unlock := lockPath(h.path)
	if owned(h.path) {
		unlock()
		return &HeldError{Path: h.path, PID: os.Getpid()}
	}
	t0 := time.Now()
	for try := 0; ; try++ {
		err := briefLock(h.f)
		if err == nil {
			testHoldLock()
			if h.dir != nil {
				if !h.SameFile() {
					// Replaced: the new file is RemoveStale's.
					briefUnlock(h.f)
					unlock()
					return RemoveStale(h.path)
				}
				err = removeIn(h.dir.d, h.path)
			} else {
				err = unlinkSame(h.f, h.path)
			}
			if uerr := briefUnlock(h.f); err == nil && uerr != nil {
				err = fmt.Errorf("pidfile %s: unlock: %w", h.path, uerr)
			}
			unlock()
			return err
		}
		if !errors.Is(err, errWouldBlock) {
			unlock()
			return fmt.Errorf("pidfile %s: lock: %w", h.path, err)
		}
		info, herr := h.Snapshot()
		var fe *ForeignError
		switch {
		case herr != nil:
			unlock()
			return herr
		case info.State == Running || info.State == Elsewhere:
			unlock()
			return &HeldError{Path: h.path, PID: info.PID}
		case errors.As(info.LockErr, &fe) && (!fe.OFD() || time.Since(t0) > BriefWait):
			unlock()
			return fe
		}
		if !h.SameFile() {
			// Replaced while we waited: the new file is RemoveStale's.
			unlock()
			return RemoveStale(h.path)
		}
		// Let go since we tried, or another multi's brief lock: again.
		testMarkBrief()
		backoff(try)
	}
}

// unlinkClose unlinks path if it still names f, then closes f, and returns
// cause (or the first error met when cause is nil).
func unlinkClose(f *os.File, path string, cause error) error {
	if err := unlinkSame(f, path); err != nil && cause == nil {
		cause = err
	}
	if err := closeFile(f); err != nil && cause == nil {
		cause = err
	}
	return cause
}

// unlinkSame unlinks path if it still names f. The name is checked and
// removed in its folder reached again without following an untrusted
// link, so a folder swapped since the open cannot redirect the unlink.
func unlinkSame(f *os.File, path string) error {
	d, err := safefs.OpenFolder(filepath.Dir(path), false)
	if err != nil {
		return nil
	}
	defer d.Close()
	return unlinkSameIn(d, f, path)
}

// unlinkSameIn unlinks path's name in d, the folder path is in, if it
// names f: the same-inode check and the unlink both relative to d.
func unlinkSameIn(d *safefs.Folder, f *os.File, path string) error {
	if d.SameFile(filepath.Base(path), f) {
		return removeIn(d, path)
	}
	return nil
}

// removeIn unlinks path's name in d, the folder path is in; a name gone
// already is not an error.
func removeIn(d *safefs.Folder, path string) error {
	if err := d.Remove(filepath.Base(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("pidfile %s: %w", path, safefs.BareErr(err))
	}
	return nil
}

// backoff sleeps a little longer on each try: 50µs doubling to 10ms.
func backoff(try int) {
	time.Sleep(time.Duration(50*1000) << min(try, 8))
}
