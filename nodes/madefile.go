package nodes

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/multi-launcher/multi/internal/safefs"
)

// A Dir is a folder held open for the files multi makes in it and later
// removes (the run tags of multi run, its ready file). It is reached once,
// without following a symbolic link someone else could have planted (see
// Folders and links in the package doc), and every file is then named relative to it: a
// folder swapped for a link later sends nothing elsewhere.
type Dir struct{ d *safefs.Folder }

// OpenDir opens the folder at path, which must exist.
func OpenDir(path string) (*Dir, error) {
	d, err := safefs.OpenFolder(path, false)
	if err != nil {
		return nil, err
	}
	return &Dir{d}, nil
}

// Close closes the folder.
func (d *Dir) Close() error { return d.d.Close() }

// Remove removes the file name in the folder, whatever it is.
func (d *Dir) Remove(name string) error { return d.d.Remove(name) }

// Make makes the file name in the folder holding data, and returns what
// identifies it (for [Dir.Has] and [Dir.RemoveMade]). It is always a new
// file (O_CREAT|O_EXCL, O_NOFOLLOW): whatever had the name before, a link
// to a file of root's say, is unlinked, never followed, written or
// truncated.
func (d *Dir) Make(name string, data []byte, perm fs.FileMode) (fs.FileInfo, error) {
	path := filepath.Join(d.d.Path(), name)
	f, err := d.d.Open(name, path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if errors.Is(err, fs.ErrExist) {
		// Unlinked in the folder held: only the name goes.
		if err = d.d.Remove(name); err == nil || errors.Is(err, fs.ErrNotExist) {
			f, err = d.d.Open(name, path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		}
	}
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && len(data) > 0 {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		d.RemoveMade(name, st)
		return nil, err
	}
	return st, nil
}

// IsFolder reports whether name in the folder is a folder (a link there
// is not followed): a file cannot be made at its name.
func (d *Dir) IsFolder(name string) bool {
	st, err := os.Lstat(filepath.Join(d.d.Path(), name))
	return err == nil && st.IsDir()
}

// Has reports whether name in the folder is still the file st describes.
func (d *Dir) Has(name string, st fs.FileInfo) bool {
	return st != nil && d.d.SameEntry(name, st)
}

// RemoveMade removes name from the folder if it is still the file st
// describes, the one [Dir.Make] made; another file of that name is left
// alone. It reports whether it removed it.
func (d *Dir) RemoveMade(name string, st fs.FileInfo) bool {
	return d.Has(name, st) && d.d.Remove(name) == nil
}

// RemoveIn unlinks the file name in the folder dir, reached without
// following an untrusted link (see Folders and links in the package doc); nothing outside
// it is touched. The error wraps [fs.ErrNotExist] when there is none.
func RemoveIn(dir, name string) error {
	d, err := safefs.OpenFolder(dir, false)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Remove(name)
}

// OpenLogfileToRead opens the logfile at path for reading (multi logs),
// as carefully as [OpenLogfile] opens it for writing: no symbolic link
// followed, at the file or on the way to it, no hang on a FIFO, and only
// a regular file with one name. Root prints what it reads, so a link or a
// hard link planted by the folder's owner must not show them a file of
// root's.
func OpenLogfileToRead(path string) (*os.File, error) {
	d, err := safefs.OpenFolder(filepath.Dir(path), false)
	if err != nil {
		return nil, fmt.Errorf("logfile %s: %w", path, safefs.BareErr(err))
	}
	defer d.Close()
	f, err := d.Open(filepath.Base(path), path, os.O_RDONLY, 0)
	if safefs.IsSymlinkErr(err) {
		return nil, fmt.Errorf("logfile %s: is a symbolic link (not followed)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("logfile %s: %w", path, safefs.BareErr(err))
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("is %s, not a regular file", safefs.DescribeType(st.Mode()))
	}
	if err == nil {
		err = safefs.CheckOneLink(st)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("logfile %s: %w", path, safefs.BareErr(err))
	}
	return f, nil
}

// ReadMade reads up to max bytes of the file name in the folder dir,
// reached as [RemoveIn] reaches it, not through a link.
func ReadMade(dir, name string, max int) ([]byte, error) {
	d, err := safefs.OpenFolder(dir, false)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	f, err := d.Open(name, filepath.Join(dir, name), os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, max)
	n, err := io.ReadFull(f, b)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = nil
	}
	return b[:n], err
}
