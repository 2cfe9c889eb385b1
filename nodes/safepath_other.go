//go:build !unix

package nodes

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// A folder is a directory files are named in; without the *at calls, by
// path.
type folder struct{ path string }

// openFolder makes sure path is a folder, creating it with create.
func openFolder(path string, create bool) (*folder, error) {
	if create {
		if err := os.MkdirAll(path, 0o755); err != nil {
			return nil, err
		}
	} else if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	return &folder{path: path}, nil
}

// An UnsafeLinkError is a symbolic link on the way to a file that is not
// followed; only the unix walk finds them.
type UnsafeLinkError struct {
	Link string
	Why  string
}

func (e *UnsafeLinkError) Error() string {
	return "folder " + e.Link + " is a symbolic link " + e.Why + "; not followed"
}

// Close does nothing here.
func (d *folder) Close() error { return nil }

func (d *folder) stat() (fs.FileInfo, error) { return os.Stat(d.path) }

func (d *folder) open(name, path string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(filepath.Join(d.path, name), flag, perm)
}

func (d *folder) sameFile(name string, f *os.File) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(filepath.Join(d.path, name))
	return err == nil && os.SameFile(a, b)
}

func (d *folder) remove(name string) error { return os.Remove(filepath.Join(d.path, name)) }

func (d *folder) rename(old, new string) error {
	return os.Rename(filepath.Join(d.path, old), filepath.Join(d.path, new))
}

func (d *folder) readable() (*os.File, error) { return os.Open(d.path) }

var errBusy = errors.New("busy")

// flock has no locks to take here: a shared one is granted, an exclusive
// one never, so leftovers are not cleaned while a writer may be at work.
func flock(f *os.File, exclusive bool) error {
	if exclusive {
		return errBusy
	}
	return nil
}

func fchmod(f *os.File, mode fs.FileMode) error { return f.Chmod(mode) }

func funlock(f *os.File) error { return nil }
