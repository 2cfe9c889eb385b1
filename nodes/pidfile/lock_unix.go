//go:build unix

package pidfile

import (
	"errors"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// errWouldBlock is what setlk returns when another process holds the lock.
var errWouldBlock = errors.New("lock held")

// wholeFile is a write lock over the whole file, however far it grows.
func wholeFile() *unix.Flock_t {
	return &unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: 0, Len: 0}
}

// setlk takes a POSIX write lock on the whole file without waiting
// (fcntl(2) F_SETLK). The lock belongs to this process and survives exec.
func setlk(f *os.File) error { return lockCmd(f, unix.F_SETLK) }

func lockCmd(f *os.File, cmd int) error {
	err := unix.FcntlFlock(f.Fd(), cmd, wholeFile())
	if err == unix.EAGAIN || err == unix.EACCES {
		return errWouldBlock
	}
	return err
}

// getlk asks which lock would stop us write-locking the whole file
// (fcntl(2) F_GETLK): none, or its kind, range and holder. The pid is the
// holder as seen from this pid namespace: 0 when it is in one we cannot
// see, -1 for an OFD lock.
func getlk(f *os.File) (lockSeen, error) {
	lk := wholeFile()
	if err := unix.FcntlFlock(f.Fd(), unix.F_GETLK, lk); err != nil {
		return lockSeen{}, err
	}
	if lk.Type == unix.F_UNLCK {
		return lockSeen{}, nil
	}
	return lockSeen{locked: true, write: lk.Type == unix.F_WRLCK, start: lk.Start, len: lk.Len, pid: int(lk.Pid)}, nil
}

// readHead reads the start of f into buf with one pread(2): a pidfile's
// text is a few bytes, and os.File.ReadAt would read again to see the end.
// It returns io.EOF with n 0 for an empty file.
func readHead(f *os.File, buf []byte) (n int, err error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	if cerr := rc.Control(func(fd uintptr) {
		for {
			n, err = unix.Pread(int(fd), buf, 0)
			if err != unix.EINTR {
				return
			}
		}
	}); cerr != nil {
		return 0, cerr
	}
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// fileIDOf names f's file by its device and inode.
func fileIDOf(f *os.File) (fileID, bool) {
	st, err := f.Stat()
	if err != nil {
		return fileID{}, false
	}
	return statID(st)
}

// fileIDAt names the file at path (not following a last link) by its
// device and inode.
func fileIDAt(path string) (fileID, bool) {
	st, err := os.Lstat(path)
	if err != nil {
		return fileID{}, false
	}
	return statID(st)
}

func statID(st os.FileInfo) (fileID, bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(sys.Dev), ino: uint64(sys.Ino)}, true
}
