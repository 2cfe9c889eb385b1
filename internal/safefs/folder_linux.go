package safefs

import "golang.org/x/sys/unix"

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
