package safefs

import (
	"fmt"
	"os"
	"path/filepath"
)

// OpenLogfile opens the logfile at path for appending, creating it (mode
// 0644) and its missing folders: no symbolic link followed, at the file
// or on the way to it, no hang on a FIFO, and only a regular file that
// nobody else planted. It lives here, not in package nodes, so that the
// exec step (package step) opens a node's logfile without nodes' imports.
func OpenLogfile(path string) (*os.File, error) {
	d, err := OpenFolder(filepath.Dir(path), true)
	if err != nil {
		return nil, fmt.Errorf("logfile %s: %w", path, BareErr(err))
	}
	defer d.Close()
	f, err := d.Open(filepath.Base(path), path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if IsSymlinkErr(err) {
		return nil, fmt.Errorf("logfile %s: is a symbolic link (not followed)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("logfile %s: %w", path, BareErr(err))
	}
	_, err = d.CheckFile(f)
	if err == nil {
		err = SetBlocking(f)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("logfile %s: %w", path, BareErr(err))
	}
	return f, nil
}
