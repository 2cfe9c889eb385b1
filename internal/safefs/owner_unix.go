//go:build unix

package safefs

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// CheckOwner refuses a pidfile, logfile or record, already open and
// described by st, that another user owns in a folder that someone else
// than this user or root can write to: a group- or world-writable folder
// such as /tmp, or one another user owns. Such a file may have been
// planted there, to make multi signal a process of the planter's choosing,
// to stop a node from starting, or to run a command of theirs from a
// record. Files of this user or of root, and files in folders only this
// user or root can write to, are accepted. dst describes dir, the folder
// the file was opened in (see [Folder.Stat]).
func CheckOwner(st fs.FileInfo, dir string, dst fs.FileInfo) error {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	uid, me := int(sys.Uid), os.Geteuid()
	if uid == me || uid == 0 {
		return nil
	}
	dsys, ok := dst.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	downer := int(dsys.Uid)
	if dst.Mode().Perm()&0o022 == 0 && (downer == me || downer == 0) {
		return nil
	}
	return fmt.Errorf("owned by uid %d, not by this user (uid %d) or root, in %s, which others can write to (owner uid %d, mode %s); refusing it",
		uid, me, dir, downer, dst.Mode())
}

// checkFolder is the folder rule of [OpenFolder] (OpenSSH's StrictModes):
// the folder at path, described by st, must be owned by root or this
// user, and writable by its owner alone. A sticky folder is no exception:
// others cannot rename or remove its files there, but they can rename a
// file of root's into it from a folder of their own.
func checkFolder(path string, st *unix.Stat_t) error {
	me := uint32(os.Geteuid())
	if (st.Uid == 0 || st.Uid == me) && st.Mode&0o022 == 0 {
		return nil
	}
	mode := fs.FileMode(st.Mode&0o777) | fs.ModeDir
	if st.Mode&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return &UnsafeFolderError{Path: path, UID: int(st.Uid), Mode: mode}
}

// CheckOneLink refuses a file with more than one name: a hard link
// planted in the folder to a file elsewhere (a file of root's, where
// fs.protected_hardlinks is off) would have root write, truncate or chmod
// that file. A pidfile, logfile or lock file multi made has one name.
func CheckOneLink(st fs.FileInfo) error {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
		return fmt.Errorf("has %d hard links, so it may be a file outside the folder; refusing it", sys.Nlink)
	}
	return nil
}

// checkWriters refuses a file others than its owner can write to, or
// owned by another user than root or this one: whoever can write it
// chooses what multi reads from it.
func checkWriters(st fs.FileInfo) error {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if me := uint32(os.Geteuid()); sys.Uid != 0 && sys.Uid != me {
		return fmt.Errorf("owned by uid %d, not by this user (uid %d) or root; refusing it", sys.Uid, me)
	}
	if st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("others can write to it (mode %s); refusing it", st.Mode().Perm())
	}
	return nil
}
