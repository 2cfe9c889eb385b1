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
			f.Close()
			return fmt.Errorf("pidfile %s: lock: %w", path, err)
		}
		h := &Handle{f: f, path: path}
		info, herr := h.Snapshot()
		f.Close()
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
		TestMarkBrief()
		backoff(try)
	}
}

// unlinkClose unlinks path if it still names f, then closes f, and returns
// cause (or the first error met when cause is nil). The name is checked
// and removed in its folder reached again without following an untrusted
// link, so a folder swapped since the open cannot redirect the unlink.
func unlinkClose(f *os.File, path string, cause error) error {
	if d, err := safefs.OpenFolder(filepath.Dir(path), false); err == nil {
		if name := filepath.Base(path); d.SameFile(name, f) {
			if err := d.Remove(name); err != nil && cause == nil && !errors.Is(err, fs.ErrNotExist) {
				cause = fmt.Errorf("pidfile %s: %w", path, safefs.BareErr(err))
			}
		}
		d.Close()
	}
	if err := f.Close(); err != nil && cause == nil {
		cause = err
	}
	return cause
}

// backoff sleeps a little longer on each try: 50µs doubling to 10ms.
func backoff(try int) {
	time.Sleep(time.Duration(50*1000) << min(try, 8))
}
