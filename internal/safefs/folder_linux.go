package safefs

import (
	"os"

	"golang.org/x/sys/unix"
)

// oPath opens the folders of a walk for the *at calls only: it needs no
// read permission on them, as a path lookup needs none.
const oPath = unix.O_PATH

// openFast opens the folder at path in one openat2(2) call that refuses
// every symbolic link on the way (RESOLVE_NO_SYMLINKS): the usual case, a
// path without links, costs one call instead of one per element. ok is
// false whenever the walk must decide: a link on the way (ELOOP), a
// folder to make, no openat2 (ENOSYS before Linux 5.6, EPERM under some
// seccomp filters), any other error.
func openFast(path string) (fd int, ok bool) {
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	return fd, err == nil
}

// Exchange swaps the files at a and b, both in the folder, in one step
// (renameat2(2) RENAME_EXCHANGE): each name then names the other's file.
func (d *Folder) Exchange(a, b string) error {
	if err := unix.Renameat2(d.fd(), a, d.fd(), b, unix.RENAME_EXCHANGE); err != nil {
		return &os.LinkError{Op: "exchange", Old: a, New: b, Err: err}
	}
	return nil
}

// RenameNew renames old to new, both in the folder, unless new exists
// (renameat2(2) RENAME_NOREPLACE; the error then wraps fs.ErrExist).
func (d *Folder) RenameNew(old, new string) error {
	if err := unix.Renameat2(d.fd(), old, d.fd(), new, unix.RENAME_NOREPLACE); err != nil {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: err}
	}
	return nil
}
