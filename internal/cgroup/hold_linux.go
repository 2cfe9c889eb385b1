package cgroup

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/fdwait"
	"github.com/multi-launcher/multi/internal/safefs"
)

// Several multi commands may work on one rundir at once: a stop removing
// the rundir's folder, emptied, while a start makes its node's folder in
// it; a stop of a node removing its empty folder while a start of the same
// name is about to join it. So a folder that is about to be used is held
// with a shared flock on a descriptor of it (the rundir's while Make makes
// a node's in it; a node's from Make until its exec step has joined it),
// and a folder is removed only by removeIdle, under an exclusive flock it
// does not wait for: a folder in use stays, and the command that uses it
// removes it later if it is still empty.

// makeNodeHook, when set (by a test), runs in Make between opening the
// rundir's folder and holding it: where a concurrent remove can still
// take the folder from under Make.
var makeNodeHook func()

// makeTries bounds how often Make makes a folder again that another
// command removed before Make held it.
const makeTries = 5

// Make makes node name's folder under c's parent, and the parent again
// if another command removed it meanwhile (there already is fine). It
// returns the folder's path and the folder, open and held: no other
// command removes it until the caller closes it, after the node's exec
// step holds it in turn (see [Open]).
func Make(c Containment, name string) (string, *os.File, error) {
	var err error
	for try := 0; try < makeTries; try++ {
		var f *os.File
		f, err = makeOnce(c, name)
		if err == nil {
			return c.NodePath(name), f, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	return "", nil, fmt.Errorf("cgroup %s: %w", c.NodePath(name), err)
}

// makeOnce is one try of Make: fs.ErrNotExist when a remove took a folder
// before it was held.
func makeOnce(c Containment, name string) (*os.File, error) {
	d, err := safefs.OpenFolder(c.Parent, false)
	if errors.Is(err, fs.ErrNotExist) {
		var g *safefs.Folder
		if g, err = safefs.OpenFolder(filepath.Dir(c.Parent), false); err == nil {
			err = unix.Mkdirat(int(g.File().Fd()), filepath.Base(c.Parent), 0o755)
			g.Close()
			if err == nil || err == unix.EEXIST {
				d, err = safefs.OpenFolder(c.Parent, false)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	p, err := reopen(d.File())
	d.Close()
	if err != nil {
		return nil, err
	}
	defer p.Close()
	if makeNodeHook != nil {
		makeNodeHook()
	}
	pfd := int(p.Fd())
	if err := flock(pfd, unix.LOCK_SH); err != nil {
		return nil, err
	}
	// Held: no remove takes the parent now. If one took it before,
	// mkdirat says ENOENT, and Make tries again.
	defer unix.Flock(pfd, unix.LOCK_UN)
	if err := unix.Mkdirat(pfd, name, 0o755); err != nil && err != unix.EEXIST {
		return nil, err
	}
	fd, err := unix.Openat(pfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), c.NodePath(name))
	if err := holdLinked(pfd, name, fd); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// reopen opens the folder f, which the walk opened (O_PATH), again
// to read, as flock needs.
func reopen(f *os.File) (*os.File, error) {
	fd, err := unix.Openat(int(f.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

// holdLinked takes a shared flock on the folder fd and checks that it is
// still name in the folder dirfd: a remove may have taken it between its
// making and the flock. fs.ErrNotExist if it did.
func holdLinked(dirfd int, name string, fd int) error {
	if err := flock(fd, unix.LOCK_SH); err != nil {
		return err
	}
	if same, err := stillNamed(dirfd, name, fd); err != nil || !same {
		return cmp.Or(err, fs.ErrNotExist)
	}
	return nil
}

// stillNamed reports whether name in the folder dirfd is still the folder
// fd, which was opened by that name.
func stillNamed(dirfd int, name string, fd int) (bool, error) {
	var held, now unix.Stat_t
	if err := unix.Fstat(fd, &held); err != nil {
		return false, err
	}
	if err := unix.Fstatat(dirfd, name, &now, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return false, err
	}
	return held.Ino == now.Ino && held.Dev == now.Dev, nil
}

// flock is flock(2), again when a signal interrupts it.
func flock(fd, how int) error {
	for {
		if err := unix.Flock(fd, how); err != unix.EINTR {
			return err
		}
	}
}

// errInUse: a folder another command holds, not removed.
var errInUse = errors.New("in use by another command")

// removeIdle removes the empty folder name in the folder dirfd, unless
// another command holds it (errInUse). The kernel refuses a populated
// cgroup (EBUSY) or one with folders in it (ENOTEMPTY).
func removeIdle(dirfd int, name string) error {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return removeOpen(dirfd, name, fd)
}

// removeOpen is removeIdle of the folder fd, opened as name in dirfd.
func removeOpen(dirfd int, name string, fd int) error {
	if err := flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if err == unix.EWOULDBLOCK {
			return errInUse
		}
		return err
	}
	// Held, so no other remove takes it and no make holds it now: the
	// name is still this folder (if another remove took it before the
	// flock, the name is gone or a new folder's, left alone).
	if same, err := stillNamed(dirfd, name, fd); err != nil || !same {
		return cmp.Or(err, errInUse)
	}
	return unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
}

// removeNodeOpen is removeOpen of a node's folder: the folders the node
// made in it (cgroups of its own), where empty and idle, removed first.
func removeNodeOpen(dirfd int, name string, fd int) error {
	err := removeOpen(dirfd, name, fd)
	if (err == unix.EBUSY || err == unix.ENOTEMPTY) && removeChildren(fd) {
		err = removeOpen(dirfd, name, fd)
	}
	return err
}

// removeChildren removes the folders in the folder fd, deepest first,
// each only where empty and idle; it reports whether it removed any.
func removeChildren(fd int) bool {
	dup, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	d := os.NewFile(uintptr(dup), "cgroup")
	defer d.Close()
	ents, _ := d.ReadDir(-1)
	removed := false
	for _, e := range ents {
		if e.IsDir() && removeIdle(fd, e.Name()) == nil {
			removed = true
		}
	}
	return removed
}

// RemoveIdle removes the folder at path if it is empty and no multi
// command holds it (see [Make]): for the tests' sweep of the folders they
// left. Nothing is removed that is not a cgroup2 folder.
func RemoveIdle(path string) error {
	d, err := safefs.OpenFolder(filepath.Dir(path), false)
	if err != nil {
		return err
	}
	defer d.Close()
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(int(d.File().Fd()), &sfs); err != nil || sfs.Type != unix.CGROUP2_SUPER_MAGIC {
		return fmt.Errorf("cgroup %s: %w (not on a cgroup2 mount)", path, ErrNotMine)
	}
	return removeIdle(int(d.File().Fd()), filepath.Base(path))
}

// Remove removes the node's cgroup folder at path if it is empty, then
// the rundir's folder above it if that is empty too. A populated folder
// is never removed (the kernel refuses it too).
func Remove(path, rundir, name string) error {
	if err := RemoveNode(path, rundir, name); err != nil {
		return err
	}
	RemoveParent(filepath.Dir(path))
	return nil
}

// RemoveNode is [Remove] without the rundir's folder: a stop of many
// nodes removes that once, at its end ([RemoveParent]).
func RemoveNode(path, rundir, name string) error {
	if err := Check(path, rundir, name); err != nil {
		return err
	}
	parent := filepath.Dir(path)
	var d *safefs.Folder
	err := fdwait.Retry(func() (err error) {
		d, err = safefs.OpenFolder(parent, false)
		return err
	}, nil)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cgroup: %w", err)
	}
	defer d.Close()
	// In use (a start of the node makes it again): that start's node
	// fills it. Populated: the kernel refuses (EBUSY).
	fd, err := unix.Openat(int(d.File().Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == nil {
		err = removeNodeOpen(int(d.File().Fd()), name, fd)
		unix.Close(fd)
	}
	switch err {
	case nil, unix.ENOENT, errInUse:
		return nil
	case unix.EBUSY:
		t, _ := Read(path, rundir, name)
		left := strconv.Itoa(len(t.Procs)) + " processes left"
		switch {
		case len(t.Procs) == 0 && len(t.Spared) > 0:
			return fmt.Errorf("cgroup %s: %w (pid %d); it stays", path, ErrSpared, t.Spared[0])
		case len(t.Procs) == 1:
			left = "1 process left"
		}
		return fmt.Errorf("cgroup %s: %s; not removed", path, left)
	default:
		return fmt.Errorf("cgroup %s: %w", path, err)
	}
}

// RemoveParent removes the rundir's cgroup folder at parent when no node
// folder is left in it.
func RemoveParent(parent string) {
	if !strings.HasPrefix(filepath.Base(parent), "multi.") {
		return
	}
	gd, err := safefs.OpenFolder(filepath.Dir(parent), false)
	if err != nil {
		return
	}
	defer gd.Close()
	removeIdle(int(gd.File().Fd()), filepath.Base(parent)) // ENOTEMPTY, errInUse: in use
}
