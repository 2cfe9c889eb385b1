package pidfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/multi-launcher/multi/internal/safefs"
)

// openPidfile opens path with flag, never following a symbolic link (in
// its folders too, see safefs.OpenFolder), and returns it only if it is a
// regular file nobody planted (see checkRegularIn). O_NONBLOCK: a FIFO
// planted at the path must not hang the open. With O_CREATE the missing
// folders are made. An absent file gives an error that wraps
// [fs.ErrNotExist].
func openPidfile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, d, err := openPidfileIn(path, flag, perm)
	if d != nil {
		d.Close()
	}
	return f, err
}

// openPidfileIn is openPidfile, which also returns the folder it opened
// the file in, still open, for the caller to close.
func openPidfileIn(path string, flag int, perm fs.FileMode) (*os.File, *safefs.Folder, error) {
	d, err := safefs.OpenFolder(filepath.Dir(path), flag&os.O_CREATE != 0)
	if err != nil {
		return nil, nil, describeOpenErr(path, err)
	}
	f, err := d.Open(filepath.Base(path), path, flag, perm)
	if err != nil {
		d.Close()
		return nil, nil, describeOpenErr(path, err)
	}
	if err := checkRegularIn(f, path, d); err != nil {
		closeFile(f)
		d.Close()
		return nil, nil, err
	}
	return f, d, nil
}

// checkRegularIn refuses, on the open file, anything but a regular file,
// and a file that another user owns in a folder others can write to (see
// safefs.CheckOwner); d is the folder it was opened in.
func checkRegularIn(f *os.File, path string, d *safefs.Folder) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("pidfile %s: %w", path, safefs.BareErr(err))
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is %s, not a regular file", ErrBadPidfile, path, safefs.DescribeType(st.Mode()))
	}
	dst, err := d.Stat()
	if err != nil {
		return fmt.Errorf("pidfile %s: folder: %w", path, safefs.BareErr(err))
	}
	if err := safefs.CheckOwner(st, d.Path(), dst); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrBadPidfile, path, err)
	}
	if err := safefs.CheckOneLink(st); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrBadPidfile, path, err)
	}
	return nil
}

// Operations in this process that lock, or remove, the same path take
// turns (see the package doc).
var (
	pathMu   sync.Mutex
	pathLock = map[string]*sync.Mutex{}
)

func lockPath(path string) (unlock func()) {
	pathMu.Lock()
	mu := pathLock[path]
	if mu == nil {
		mu = new(sync.Mutex)
		pathLock[path] = mu
	}
	pathMu.Unlock()
	mu.Lock()
	return mu.Unlock
}

// owned reports whether this process holds the lock of the file at path.
func owned(path string) bool { return ownAt(path) != nil }

// ownHandle returns a handle on the locked descriptor of the file at path,
// if this process holds its lock, so that no second descriptor is opened;
// nil otherwise.
func ownHandle(path string) *Handle {
	if f := ownAt(path); f != nil {
		return &Handle{f: f, path: path, borrowed: true}
	}
	return nil
}
