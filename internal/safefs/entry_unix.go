//go:build unix

package safefs

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// SameEntry reports whether name in the folder, not followed if a link,
// is the file st describes (from a Stat of a file opened there): a file
// multi made is removed, or taken for its own, only while it is.
func (d *Folder) SameEntry(name string, st fs.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	var b unix.Stat_t
	if unix.Fstatat(d.fd(), name, &b, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false
	}
	return uint64(sys.Dev) == uint64(b.Dev) && uint64(sys.Ino) == uint64(b.Ino)
}
