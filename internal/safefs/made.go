package safefs

// The files multi makes in a folder it holds and later removes (the run
// tags of multi run, its ready file, the stop marks), and reading or
// removing one of them through a folder reached by the walk.

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Make makes the file name in the folder holding data, and returns what
// identifies it (for [Folder.Has] and [Folder.RemoveMade]). It is always a
// new file (O_CREAT|O_EXCL, O_NOFOLLOW): whatever had the name before, a
// link to a file of root's say, is unlinked, never followed, written or
// truncated.
func (d *Folder) Make(name string, data []byte, perm fs.FileMode) (fs.FileInfo, error) {
	path := filepath.Join(d.Path(), name)
	f, err := d.Open(name, path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if errors.Is(err, fs.ErrExist) {
		// Unlinked in the folder held: only the name goes.
		if err = d.Remove(name); err == nil || errors.Is(err, fs.ErrNotExist) {
			f, err = d.Open(name, path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
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
func (d *Folder) IsFolder(name string) bool {
	st, err := os.Lstat(filepath.Join(d.Path(), name))
	return err == nil && st.IsDir()
}

// Has reports whether name in the folder is still the file st describes.
func (d *Folder) Has(name string, st fs.FileInfo) bool {
	return st != nil && d.SameEntry(name, st)
}

// RemoveMade removes name from the folder if it is still the file st
// describes, the one [Folder.Make] made; another file of that name is left
// alone. It reports whether it removed it.
func (d *Folder) RemoveMade(name string, st fs.FileInfo) bool {
	return d.Has(name, st) && d.Remove(name) == nil
}

// MakeDir makes the folder at path and its missing parents (mode 0755),
// without following a symbolic link that someone other than root or this
// user could have planted (see [OpenFolder]).
func MakeDir(path string) error {
	d, err := OpenFolder(path, true)
	if err != nil {
		return err
	}
	return d.Close()
}

// RemoveIn unlinks the file name in the folder dir, reached without
// following an untrusted link (see [OpenFolder]); nothing outside it is
// touched. The error wraps [fs.ErrNotExist] when there is none.
func RemoveIn(dir, name string) error {
	d, err := OpenFolder(dir, false)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Remove(name)
}

// ReadMade reads up to max bytes of the file name in the folder dir,
// reached as [RemoveIn] reaches it, not through a link.
func ReadMade(dir, name string, max int) ([]byte, error) {
	d, err := OpenFolder(dir, false)
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
