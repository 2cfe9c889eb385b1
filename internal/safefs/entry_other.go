//go:build !unix

package safefs

import (
	"io/fs"
	"os"
	"path/filepath"
)

// SameEntry reports whether name in the folder is the file st describes.
func (d *Folder) SameEntry(name string, st fs.FileInfo) bool {
	b, err := os.Lstat(filepath.Join(d.path, name))
	return err == nil && os.SameFile(st, b)
}
