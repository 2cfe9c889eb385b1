//go:build unix

package safefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// maxLinks bounds the trusted symbolic links one walk follows, as the
// kernel's own 40.
const maxLinks = 40

// A Folder is a directory reached by [OpenFolder]: every file multi
// creates, opens, renames or removes in it is named relative to it, so
// that swapping a folder on the path for a symbolic link after the walk
// cannot send the operation elsewhere.
type Folder struct {
	f      *os.File // O_PATH on Linux: enough for the *at calls
	path   string
	shared bool // others can write to it, and it was accepted
}

// OpenFolder opens the folder at path one element at a time from "/",
// never following a symbolic link it cannot trust, and, with create,
// makes the missing folders (mode 0755 less the umask) with mkdirat in the
// folder just opened.
//
// A symbolic link on the way is followed only when nobody but root or
// this user could have made it or swapped it: the link is owned by root
// or this user, and so is the folder it sits in, which nobody else can
// write to (a sticky folder, as /tmp, counts as safe, since there nobody
// else can rename or remove the link). That keeps /var/run -> /run and
// links of one's own, and refuses a link the owner of the folder multi
// was given planted there for root to follow: the error names the link
// and who could have planted it. The same walk, the same answer, on every
// unix. On Linux a path without any link is opened in one openat2 call
// (see openFast); its RESOLVE_NO_SYMLINKS alone would refuse the trusted
// links too, so a path with links takes the walk.
//
// The folder reached must itself be one that nobody but root or this
// user can write to, as OpenSSH's StrictModes wants of a home: owned by
// root or this user, and neither group- nor world-writable. Otherwise
// whoever can write to it could have put any file there, or renamed one
// of root's there (a pidfile or logfile whose content a de-privileged
// node wrote, renamed to a record's name), and it is refused with an
// [UnsafeFolderError], unless it was accepted ([AcceptShared]).
func OpenFolder(path string, create bool) (*Folder, error) {
	fd, path, err := walk(path, create)
	if err != nil {
		return nil, err
	}
	return checkedFolder(fd, path)
}

// OpenWorkFolder opens the folder at path as [OpenFolder] does, without
// making it, and without its rule on who may write to the folder reached:
// for a node's working folder, where multi opens no file of its own. A
// command named relative to that folder (./run.sh) is a file in it: open
// the folder with OpenFolder then.
func OpenWorkFolder(path string) (*Folder, error) {
	fd, path, err := walk(path, false)
	if err != nil {
		return nil, err
	}
	return &Folder{f: os.NewFile(uintptr(fd), path), path: path}, nil
}

// walk opens the folder at path for [OpenFolder], and returns its
// descriptor and its path made absolute and clean.
func walk(path string, create bool) (int, string, error) {
	if !filepath.IsAbs(path) {
		abs, err := filepath.Abs(path)
		if err != nil {
			return -1, "", err
		}
		path = abs
	}
	path = filepath.Clean(path)
	if fd, ok := openFast(path); ok {
		return fd, path, nil
	}
	fd, err := unix.Open("/", oPath|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", &fs.PathError{Op: "open", Path: "/", Err: err}
	}
	here, links := "/", 0
	rest := strings.Split(path, "/")
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		if name == "" || name == "." {
			continue
		}
		next, err := unix.Openat(fd, name, oPath|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.ENOENT && create {
			if err = unix.Mkdirat(fd, name, 0o755); err == nil || err == unix.EEXIST {
				next, err = unix.Openat(fd, name, oPath|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			}
		}
		if err != nil {
			var st unix.Stat_t
			if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
				unix.Close(fd)
				op := "open"
				if create {
					op = "mkdir"
				}
				return -1, "", &fs.PathError{Op: op, Path: filepath.Join(here, name), Err: err}
			}
			target, err := trustedLink(fd, name, &st, filepath.Join(here, name), here)
			if err == nil && links >= maxLinks {
				err = &fs.PathError{Op: "open", Path: path, Err: unix.ELOOP}
			}
			if err != nil {
				unix.Close(fd)
				return -1, "", err
			}
			links++
			if filepath.IsAbs(target) {
				unix.Close(fd)
				if fd, err = unix.Open("/", oPath|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
					return -1, "", &fs.PathError{Op: "open", Path: "/", Err: err}
				}
				here = "/"
			}
			rest = append(strings.Split(target, "/"), rest...)
			continue
		}
		unix.Close(fd)
		fd, here = next, filepath.Join(here, name)
	}
	return fd, path, nil
}

// checkedFolder returns the folder open at fd, path, if nobody but root
// or this user can write to it, or it was accepted (see [OpenFolder]).
func checkedFolder(fd int, path string) (*Folder, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	err := checkFolder(path, &st)
	if err != nil && !accepted(path) {
		unix.Close(fd)
		return nil, err
	}
	return &Folder{f: os.NewFile(uintptr(fd), path), path: path, shared: err != nil}, nil
}

// trustedLink returns the target of the link name in the folder dirfd if
// the link can be trusted (see [OpenFolder]).
func trustedLink(dirfd int, name string, st *unix.Stat_t, link, dir string) (string, error) {
	me := uint32(os.Geteuid())
	var dst unix.Stat_t
	if err := unix.Fstat(dirfd, &dst); err != nil {
		return "", &fs.PathError{Op: "stat", Path: dir, Err: err}
	}
	switch {
	case st.Uid != 0 && st.Uid != me:
		return "", &UnsafeLinkError{link, fmt.Sprintf("owned by uid %d, who could point it anywhere", st.Uid)}
	case dst.Uid != 0 && dst.Uid != me:
		return "", &UnsafeLinkError{link, fmt.Sprintf("in %s, a folder of uid %d, who could swap it", dir, dst.Uid)}
	case dst.Mode&0o022 != 0 && dst.Mode&unix.S_ISVTX == 0:
		return "", &UnsafeLinkError{link, fmt.Sprintf("in %s, which others can write to (mode %o)", dir, dst.Mode&0o7777)}
	}
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(dirfd, name, buf)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: link, Err: err}
	}
	return string(buf[:n]), nil
}

func (d *Folder) fd() int { return int(d.f.Fd()) }

// Close closes the folder.
func (d *Folder) Close() error { return d.f.Close() }

// Path returns the folder's path, as it was given (made absolute and
// clean).
func (d *Folder) Path() string { return d.path }

// File is the folder's open descriptor (O_PATH on Linux: enough for
// fchdir(2)), which [Folder.Close] closes.
func (d *Folder) File() *os.File { return d.f }

// Stat describes the folder itself, for [CheckOwner].
func (d *Folder) Stat() (fs.FileInfo, error) { return d.f.Stat() }

// Open opens name in the folder with flag, never following a symbolic
// link and never hanging on a FIFO (O_NONBLOCK stays set; clear it with
// [SetBlocking]). Errors are *fs.PathError naming path.
func (d *Folder) Open(name, path string, flag int, perm fs.FileMode) (*os.File, error) {
	fd, err := unix.Openat(d.fd(), name, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// SameFile reports whether name in the folder, not followed if a link,
// is the file f has open.
func (d *Folder) SameFile(name string, f *os.File) bool {
	var a, b unix.Stat_t
	if unix.Fstat(int(f.Fd()), &a) != nil || unix.Fstatat(d.fd(), name, &b, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false
	}
	return a.Dev == b.Dev && a.Ino == b.Ino
}

// Remove unlinks name in the folder.
func (d *Folder) Remove(name string) error {
	if err := unix.Unlinkat(d.fd(), name, 0); err != nil {
		return &fs.PathError{Op: "remove", Path: filepath.Join(d.path, name), Err: err}
	}
	return nil
}

// Rename renames old to new, both in the folder.
func (d *Folder) Rename(old, new string) error {
	if err := unix.Renameat(d.fd(), old, d.fd(), new); err != nil {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: err}
	}
	return nil
}

// ReadDir reads the folder's entries, in directory order.
func (d *Folder) ReadDir() ([]fs.DirEntry, error) {
	fd, err := unix.Openat(d.fd(), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.path, Err: err}
	}
	dir := os.NewFile(uintptr(fd), d.path)
	defer dir.Close()
	return dir.ReadDir(-1)
}

// SetBlocking clears O_NONBLOCK on a file [Folder.Open] opened, which was
// only there so that opening a FIFO planted at the path could not hang.
func SetBlocking(f *os.File) error { return unix.SetNonblock(int(f.Fd()), false) }

// IsSymlinkErr reports whether an open by [Folder.Open] (O_NOFOLLOW)
// failed on a symbolic link.
func IsSymlinkErr(err error) bool { return errors.Is(err, unix.ELOOP) }

// IsDirErr reports whether an open for writing failed on a directory.
func IsDirErr(err error) bool { return errors.Is(err, unix.EISDIR) }
