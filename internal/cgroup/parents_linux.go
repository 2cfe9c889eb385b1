package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// Parents holds the rundirs' cgroup folders of one stop open: each is
// reached once, through the no-link walk, and every node folder in it
// is then opened relative to it by its one name (see [Parents.Clear]):
// a stop of many nodes walks no path per node.
type Parents struct {
	mu   sync.Mutex
	open map[string]*os.File
	// dropped: folders no longer handed out, closed only by Close, since
	// a concurrent Clear may still be using one (its number, if closed,
	// could name another folder by then).
	dropped []*os.File
}

// NewParents returns an empty Parents; Close closes what it opened.
func NewParents() *Parents { return &Parents{open: map[string]*os.File{}} }

// Close closes the folders p holds open.
func (p *Parents) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, f := range p.open {
		f.Close()
		delete(p.open, k)
	}
	for _, f := range p.dropped {
		f.Close()
	}
	p.dropped = nil
}

// parent returns the folder at path, opened by the first call.
func (p *Parents) parent(path string) (*os.File, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f := p.open[path]; f != nil {
		return f, nil
	}
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	p.open[path] = f
	return f, nil
}

// drop forgets the folder at path, if it is f: removed and made again by
// other commands, say. It stays open until Close.
func (p *Parents) drop(path string, f *os.File) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open[path] == f {
		delete(p.open, path)
		p.dropped = append(p.dropped, f)
	}
}

// Clear removes the node's cgroup folder at path if nothing is left in
// it and no other command holds it (see [Make]), and reports whether
// nothing of the node's tree is left: true when the folder is gone,
// removed, or empty and in use (by a start, whose node fills it); false
// when a process is left in it. With true, an error says why an empty
// folder was not removed; with false, why it could not be looked at.
//
// The rmdir comes first: the kernel refuses a populated cgroup (EBUSY),
// so a node that was its tree's only process costs one try, and
// cgroup.events is read only when the rmdir could not say.
func (p *Parents) Clear(path, rundir, name string) (bool, error) {
	if err := Check(path, rundir, name); err != nil {
		return false, err
	}
	dirPath := filepath.Dir(path)
	dir, err := p.parent(dirPath)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return clearByPath(path, rundir, name)
	}
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		// Gone, or the held folder is no longer the rundir's (another
		// command removed it and made it again): the path says.
		p.drop(dirPath, dir)
		return clearByPath(path, rundir, name)
	}
	defer unix.Close(fd)
	err = removeNodeOpen(int(dir.Fd()), name, fd)
	switch err {
	case nil, unix.ENOENT:
		return true, nil
	case unix.EBUSY:
		return false, nil
	case errInUse, unix.ENOTEMPTY:
		// Held by a start, or folders left in it: populated says.
	default:
		return true, fmt.Errorf("cgroup %s: %w", path, err)
	}
	full, rerr := populatedAt(fd)
	switch {
	case errors.Is(rerr, fs.ErrNotExist):
		return true, nil // removed by another command meanwhile
	case rerr != nil:
		return false, fmt.Errorf("cgroup %s: %w", path, rerr)
	case full:
		return false, nil
	case err == unix.ENOTEMPTY:
		return true, fmt.Errorf("cgroup %s: %w", path, err)
	}
	return true, nil
}

// clearByPath is Clear on the folder reached by its path.
func clearByPath(path, rundir, name string) (bool, error) {
	full, err := Populated(path, rundir, name)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil || full {
		return false, err
	}
	return true, RemoveNode(path, rundir, name)
}

// populatedAt reads the populated key of cgroup.events in the folder fd.
func populatedAt(fd int) (bool, error) {
	ev, err := readAt(fd, "cgroup.events")
	return bytes.Contains(ev, []byte("populated 1")), err
}
