package safefs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ReadFile reads the file at path as input multi trusts (a project file,
// an env file): reached by [OpenFolder]'s walk in a folder nobody but root
// or this user can write to, not a link, a regular file with one name,
// owned by root or this user and writable by nobody else. More than max
// bytes is an error naming the file. Errors name path.
func ReadFile(path string, max int64) ([]byte, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	d, err := OpenFolder(filepath.Dir(abs), false)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	f, err := d.Open(filepath.Base(abs), abs, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := d.CheckFile(f)
	if err == nil {
		err = checkWriters(st)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", abs, err)
	}
	if err := SetBlocking(f); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: larger than %d bytes; refusing it", abs, max)
	}
	return b, nil
}
