//go:build !unix

package safefs

// Off Unix: no *at calls, no O_NOFOLLOW, no owners: folders are named
// by path and nothing is checked.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// A Folder is a directory files are named in; without the *at calls, by
// path.
type Folder struct {
	path   string
	shared bool // never set here: no owners to compare
}

// OpenFolder makes sure path is a folder, creating it with create.
func OpenFolder(path string, create bool) (*Folder, error) {
	if create {
		if err := os.MkdirAll(path, 0o755); err != nil {
			return nil, err
		}
	} else if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	return &Folder{path: path}, nil
}

// Close does nothing here.
func (d *Folder) Close() error { return nil }

// Path returns the folder's path.
func (d *Folder) Path() string { return d.path }

// Stat describes the folder itself.
func (d *Folder) Stat() (fs.FileInfo, error) { return os.Stat(d.path) }

// Open opens name in the folder with flag.
func (d *Folder) Open(name, path string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(filepath.Join(d.path, name), flag, perm)
}

// SameFile reports whether name in the folder is the file f has open.
func (d *Folder) SameFile(name string, f *os.File) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(filepath.Join(d.path, name))
	return err == nil && os.SameFile(a, b)
}

// Remove removes name in the folder.
func (d *Folder) Remove(name string) error { return os.Remove(filepath.Join(d.path, name)) }

// Rename renames old to new, both in the folder.
func (d *Folder) Rename(old, new string) error {
	return os.Rename(filepath.Join(d.path, old), filepath.Join(d.path, new))
}

// ReadDir reads the folder's entries.
func (d *Folder) ReadDir() ([]fs.DirEntry, error) {
	dir, err := os.Open(d.path)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	return dir.ReadDir(-1)
}

// SetBlocking has nothing to clear here.
func SetBlocking(f *os.File) error { return nil }

// IsSymlinkErr: no O_NOFOLLOW here.
func IsSymlinkErr(err error) bool { return false }

// IsDirErr: not told apart here.
func IsDirErr(err error) bool { return false }

// Exchange would swap two files in one step: not here (errors.ErrUnsupported).
func (d *Folder) Exchange(a, b string) error { return errors.ErrUnsupported }

// RenameNew would rename without replacing: not here (errors.ErrUnsupported).
func (d *Folder) RenameNew(old, new string) error { return errors.ErrUnsupported }

// OpenWorkFolder makes sure path is a folder.
func OpenWorkFolder(path string) (*Folder, error) { return OpenFolder(path, false) }

// File has no descriptor to give here: nil.
func (d *Folder) File() *os.File { return nil }

// SameEntry reports whether name in the folder is the file st describes.
func (d *Folder) SameEntry(name string, st fs.FileInfo) bool {
	b, err := os.Lstat(filepath.Join(d.path, name))
	return err == nil && os.SameFile(st, b)
}

// CheckOwner has no owners to compare here.
func CheckOwner(st fs.FileInfo, dir string, dst fs.FileInfo) error { return nil }

// CheckOneLink has no link counts to look at here.
func CheckOneLink(st fs.FileInfo) error { return nil }

// checkWriters has no owners to look at here.
func checkWriters(st fs.FileInfo) error { return nil }
