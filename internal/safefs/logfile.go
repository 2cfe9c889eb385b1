package safefs

import (
	"fmt"
	"os"
	"path/filepath"
)

// OpenLogfile opens the logfile at path for appending, creating it (mode
// 0644) and its missing folders: no symbolic link followed, at the file
// or on the way to it, no hang on a FIFO, and only a regular file that
// nobody else planted. Root appends node output to it, so a link planted
// by the folder's owner must not point root at a file of root's.
func OpenLogfile(path string) (*os.File, error) {
	d, err := OpenFolder(filepath.Dir(path), true)
	if err != nil {
		return nil, fmt.Errorf("logfile %s: %w", path, BareErr(err))
	}
	defer d.Close()
	return d.OpenLogfile(filepath.Base(path), path)
}

// OpenLogfile opens the logfile name in the folder (path names it in
// errors) as [OpenLogfile] does: a log writer that rotates it keeps the
// folder open and opens each new file there.
func (d *Folder) OpenLogfile(name, path string) (*os.File, error) {
	f, err := d.Open(name, path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
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

// OpenLogfileToRead opens the logfile at path for reading (multi logs),
// as carefully as [OpenLogfile] opens it for writing: no symbolic link
// followed, at the file or on the way to it, no hang on a FIFO, and only
// a regular file with one name. Root prints what it reads, so a link or a
// hard link planted by the folder's owner must not show them a file of
// root's.
func OpenLogfileToRead(path string) (*os.File, error) {
	d, err := OpenFolder(filepath.Dir(path), false)
	if err != nil {
		return nil, fmt.Errorf("logfile %s: %w", path, BareErr(err))
	}
	defer d.Close()
	f, err := d.Open(filepath.Base(path), path, os.O_RDONLY, 0)
	if IsSymlinkErr(err) {
		return nil, fmt.Errorf("logfile %s: is a symbolic link (not followed)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("logfile %s: %w", path, BareErr(err))
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("is %s, not a regular file", DescribeType(st.Mode()))
	}
	if err == nil {
		err = CheckOneLink(st)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("logfile %s: %w", path, BareErr(err))
	}
	return f, nil
}
