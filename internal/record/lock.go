package record

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/safefs"
	"github.com/multi-launcher/multi/nodes"
)

// A node's record lock: one start of a node at a time decides, spawns and
// records, so that the record always names the instance that holds the
// node's pidfile lock.

// recordLockName is the node's record lock file, ".NAME.node.lock": mode
// 0600, as the rundir's lock file, so that no other user can open it and
// hold up a start; it never collides with that file (".records.lock"),
// a spare or a temp file.
func recordLockName(name string) string { return "." + name + Ext + ".lock" }

// A Locked is held by one writer of a node's record at a time, across
// processes: [Lock] takes it, [Locked.Unlock] lets go. The
// kernel lets go of it when its holder dies.
type Locked struct {
	f            *os.File
	rundir, name string
}

// Lock takes the record lock of the node named name in rundir,
// waiting for another holder (a start of the same node in another
// process, or in this one) until ctx ends. Reading a record needs no
// lock; a start holds it from reading the node's record until it has
// recorded the process it started, so that two starts of one node never
// write its record at once, and the loser of a race for its pidfile
// leaves the winner's record as it is.
func Lock(ctx context.Context, rundir, name string) (*Locked, error) {
	if err := nodes.CheckName(name); err != nil {
		return nil, err
	}
	lname := recordLockName(name)
	path := filepath.Join(rundir, lname)
	fail := func(err error) error { return fmt.Errorf("record lock %s: %w", path, safefs.BareErr(err)) }
	d, err := safefs.OpenFolder(rundir, true)
	if err != nil {
		return nil, fail(err)
	}
	defer d.Close()
	for try := 0; ; try++ {
		f, err := d.Open(lname, path, os.O_RDWR|os.O_CREATE, 0o600)
		if errors.Is(err, syscall.EROFS) {
			f, err = d.Open(lname, path, os.O_RDONLY, 0) // a flock needs no write access
		}
		if err != nil && cannotWrite(err) {
			// Nor can a record be written here: nothing to take turns
			// on, and the write says why.
			return &Locked{rundir: rundir, name: name}, nil
		}
		if err != nil {
			return nil, fail(err)
		}
		st, err := d.CheckFile(f)
		if err == nil && st.Mode().Perm() != 0o600 {
			err = f.Chmod(0o600)
		}
		if err != nil {
			f.Close()
			return nil, fail(err)
		}
		if !flockWorks {
			return &Locked{f: f, rundir: rundir, name: name}, nil
		}
		for wait := 0; ; wait++ {
			err := flock(f, true)
			if err == nil {
				break
			}
			if err != errBusy {
				f.Close()
				return nil, fail(err)
			}
			// 50µs doubling to 12.8ms: another start of the node
			// spawns it meanwhile, which takes milliseconds.
			select {
			case <-ctx.Done():
				f.Close()
				return nil, ctx.Err()
			case <-time.After(time.Duration(50*1000) << min(wait, 8)):
			}
		}
		// Removed (forget) while this one waited: the lock that counts
		// is the one on the file at the name now.
		if d.SameFile(lname, f) {
			return &Locked{f: f, rundir: rundir, name: name}, nil
		}
		f.Close()
		if try >= 100 {
			return nil, fail(fmt.Errorf("removed again and again while being locked"))
		}
	}
}

// Unlock lets go of the record lock.
func (l *Locked) Unlock() error {
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}

// Remove removes the node's record as [Remove] does, and the
// lock file too, as l holds it and so nobody else does. l stays held
// until [Locked.Unlock]; a start that waits for it meanwhile then
// finds the file gone and locks a new one.
func (l *Locked) Remove() error {
	if l.f == nil {
		return Remove(l.rundir, l.name)
	}
	return removeRecord(l.rundir, l.name, l.f)
}

// cannotWrite reports whether err says the rundir cannot be written to
// (read-only, not this user's, full), rather than that a file there is
// not what it should be.
func cannotWrite(err error) bool {
	for _, e := range []error{syscall.EROFS, syscall.EACCES, syscall.EPERM, syscall.ENOSPC, syscall.EDQUOT, fs.ErrNotExist} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// removeRecordLock removes the record lock file of the node named name
// from d, unless someone else holds it: it is locked first, without
// waiting, unless held is that file as the caller holds it. A start that
// opened the file before and waits for its lock then finds it gone, and
// locks the one at the name (see [Lock]).
func removeRecordLock(d *safefs.Folder, name string, held *os.File) {
	lname := recordLockName(name)
	if held != nil {
		if flockWorks && d.SameFile(lname, held) {
			d.Remove(lname)
		}
		return
	}
	f, err := d.Open(lname, filepath.Join(d.Path(), lname), os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if flockWorks && flock(f, true) == nil && d.SameFile(lname, f) {
		d.Remove(lname)
	}
}
