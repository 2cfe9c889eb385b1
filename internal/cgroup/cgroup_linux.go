package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/fdwait"
	"github.com/multi-launcher/multi/internal/safefs"
)

// Open opens the cgroup folder at path, reached by the no-link walk,
// for the exec step to join: a path [Make] returned. The descriptor holds
// the folder (see [Make]) until every copy of it is closed: the step's,
// once it has joined, included.
func Open(path string) (*os.File, error) {
	p, err := open(path)
	if err != nil {
		return nil, err
	}
	f, err := reopen(p)
	p.Close()
	if err == nil {
		err = flock(int(f.Fd()), unix.LOCK_SH)
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		return nil, fmt.Errorf("cgroup %s: %w", path, err)
	}
	return f, nil
}

// open opens the cgroup folder at path, reached by the no-link walk, and
// checks that it is on a cgroup2 mount.
func open(path string) (*os.File, error) {
	d, err := safefs.OpenFolder(path, false)
	if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	f := d.File()
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &sfs); err != nil || sfs.Type != unix.CGROUP2_SUPER_MAGIC {
		f.Close()
		return nil, fmt.Errorf("cgroup %s: %w (not on a cgroup2 mount)", path, ErrNotMine)
	}
	return f, nil
}

// openNode opens the node's cgroup at path once [Check] has passed. Short
// of descriptors (a stop's waits under a low RLIMIT_NOFILE), it waits for
// one while other operations of this process will give some back
// (fdwait).
func openNode(path, rundir, name string) (*os.File, error) {
	if err := Check(path, rundir, name); err != nil {
		return nil, err
	}
	var f *os.File
	err := fdwait.Retry(func() (err error) {
		f, err = open(path)
		return err
	}, nil)
	return f, err
}

// Join moves this process into the cgroup folder open at dirfd.
func Join(dirfd int) error {
	fd, err := unix.Openat(dirfd, "cgroup.procs", unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	_, err = unix.Write(fd, []byte(strconv.Itoa(os.Getpid())))
	return err
}

// readInHook, when set (by a test), runs in readIn between opening a
// file of the folder and reading it.
var readInHook func(name string)

// readIn reads the file name in the folder f. A folder removed since it
// was opened reads as fs.ErrNotExist.
func readIn(f *os.File, name string) ([]byte, error) {
	return readAt(int(f.Fd()), name)
}

// readAt is readIn in the folder open at dirfd: plain reads of a small
// file, no os.File around it.
func readAt(dirfd int, name string) ([]byte, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	if readInHook != nil {
		readInHook(name)
	}
	b := make([]byte, 0, 512)
	for {
		n, err := unix.Read(fd, b[len(b):cap(b)])
		if err == unix.EINTR {
			continue
		}
		if errors.Is(err, unix.ENODEV) {
			// The folder was removed after it was opened (another
			// command's stop of the same node): gone, as if never found.
			return nil, fmt.Errorf("%w (%w)", fs.ErrNotExist, err)
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: name, Err: err}
		}
		if n <= 0 {
			return b, nil
		}
		b = b[:len(b)+n]
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// Kill SIGKILLs every process in the node's cgroup at path (cgroup.kill;
// where this process runs in it, each other process, see [Tree.Spared]).
func Kill(path, rundir, name string) error {
	f, err := openNode(path, rundir, name)
	if err != nil {
		return err
	}
	defer f.Close()
	if t, err := read(f); err == nil && len(t.Spared) > 0 {
		signalEach(f, t, syscall.SIGKILL)
		return nil
	}
	fd, err := unix.Openat(int(f.Fd()), "cgroup.kill", unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("cgroup %s: %w", path, err)
	}
	defer unix.Close(fd)
	if _, err := unix.Write(fd, []byte("1")); err != nil {
		return fmt.Errorf("cgroup %s: cgroup.kill: %w", path, err)
	}
	return nil
}

// Signal sends sig to every process in the node's cgroup at path, the
// cgroup frozen meanwhile so that none of its pids is reused between the
// read and the signal.
func Signal(path, rundir, name string, sig syscall.Signal) error {
	f, err := openNode(path, rundir, name)
	if err != nil {
		return err
	}
	defer f.Close()
	write := func(file, v string) error {
		fd, err := unix.Openat(int(f.Fd()), file, unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		_, err = unix.Write(fd, []byte(v))
		return err
	}
	if t, err := read(f); err == nil && len(t.Spared) > 0 {
		signalEach(f, t, sig) // this process must not freeze itself
		return nil
	}
	if err := write("cgroup.freeze", "1"); err != nil {
		return fmt.Errorf("cgroup %s: cgroup.freeze: %w", path, err)
	}
	defer write("cgroup.freeze", "0")
	t, err := read(f)
	if err != nil {
		return err
	}
	for _, pid := range t.Procs {
		if pid > 1 && pid != os.Getpid() {
			syscall.Kill(pid, sig)
		}
	}
	return nil
}

// WaitEmpty waits until nothing is left in the node's cgroup at path, or
// until deadline (zero: none) or done closes; it reports whether it is
// empty, read again before it says so. It wakes at each change of the
// cgroup's cgroup.events (see watchEvents), and polls too, at most every
// pollCap, in case no watch could be had.
func WaitEmpty(path, rundir, name string, deadline time.Time, done <-chan struct{}) (bool, error) {
	var wake chan struct{}
	if f, err := openNode(path, rundir, name); err == nil {
		var stop func()
		if wake, stop, err = watchEvents(f); err == nil {
			defer stop()
		}
		f.Close()
	}
	for delay := pollFirst; ; delay = min(2*delay, pollCap) {
		// Opened for each look, not held: a stop waits on many at once.
		t, err := Read(path, rundir, name)
		if errors.Is(err, fs.ErrNotExist) {
			return true, nil
		}
		if err != nil && !fdwait.Short(err) {
			return false, err
		}
		if err == nil && !t.Populated {
			return true, nil
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			return false, nil
		}
		if waitLooked != nil {
			waitLooked()
		}
		wait := delay
		if !deadline.IsZero() {
			wait = min(wait, max(time.Until(deadline), 0)+time.Millisecond)
		}
		timer := time.NewTimer(wait)
		select {
		case <-done:
			timer.Stop()
			return false, nil
		case <-wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// pollFirst and pollCap bound the waits between two looks at a cgroup
// whose events may not be watched (the first, and the longest); a test
// sets them high, to see the watch wake. waitLooked, when a test sets it,
// runs after each look that found the cgroup populated.
var (
	pollFirst  = 100 * time.Microsecond
	pollCap    = 50 * time.Millisecond
	waitLooked func()
)

// Populated reports whether a process is left in the node's cgroup at
// path, from its cgroup.events alone; fs.ErrNotExist when there is no
// such folder.
func Populated(path, rundir, name string) (bool, error) {
	f, err := openNode(path, rundir, name)
	if err != nil {
		return false, err
	}
	defer f.Close()
	ev, err := readIn(f, "cgroup.events")
	if err != nil {
		return false, fmt.Errorf("cgroup %s: %w", path, err)
	}
	return bytes.Contains(ev, []byte("populated 1")), nil
}

// KillMade kills what is left in the cgroup at path, one [Make] made for
// a start under way, and returns the pids it found there: for a start
// whose command daemonized, what it left behind.
func KillMade(path string) ([]int, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := read(f)
	if err != nil || !t.Populated {
		return nil, err
	}
	fd, err := unix.Openat(int(f.Fd()), "cgroup.kill", unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return t.Procs, fmt.Errorf("cgroup %s: %w", path, err)
	}
	defer unix.Close(fd)
	if _, err := unix.Write(fd, []byte("1")); err != nil {
		return t.Procs, fmt.Errorf("cgroup %s: cgroup.kill: %w", path, err)
	}
	return t.Procs, nil
}

// Sweep removes every empty node folder under this process's folder for
// rundir, and that folder when it is then empty: for tests, whose nodes
// end in any way. A populated folder is never removed.
func Sweep(rundir string) {
	c := Detect(rundir)
	if c.Mode != Cgroup {
		return
	}
	d, err := safefs.OpenFolder(c.Parent, false)
	if err != nil {
		return
	}
	defer d.Close()
	fd, err := unix.Openat(int(d.File().Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	dir := os.NewFile(uintptr(fd), c.Parent)
	defer dir.Close()
	ents, _ := dir.ReadDir(-1)
	for _, e := range ents {
		if e.IsDir() {
			removeIdle(int(d.File().Fd()), e.Name()) // EBUSY: populated; errInUse: a start's
		}
	}
	RemoveParent(c.Parent)
}
