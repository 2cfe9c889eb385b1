package pidfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/multi-launcher/multi/internal/safefs"
)

// Folders shares, between the many pidfiles one command opens (a stopwait
// of a thousand nodes), the folders they are in: each folder is reached
// once (the walk from /, see Folders and links in the package doc) and
// each pidfile in it is opened, checked and later unlinked relative to
// that open folder, instead of one walk for the open and another for the
// removal. The folder stays the one the walk reached even if its path is
// swapped for a link since: nothing is opened or unlinked anywhere else.
// A nil *Folders opens each pidfile on its own, as [OpenToRemove] does.
type Folders struct {
	mu sync.Mutex
	m  map[string]*sharedFolder
}

// A sharedFolder is an open folder and how many hold it: the Folders and
// each Handle opened in it.
type sharedFolder struct {
	d    *safefs.Folder
	mu   sync.Mutex
	refs int
}

// NewFolders returns an empty Folders. Close it when no more pidfiles are
// to be opened through it.
func NewFolders() *Folders { return &Folders{m: map[string]*sharedFolder{}} }

func (sf *sharedFolder) ref() *sharedFolder {
	sf.mu.Lock()
	sf.refs++
	sf.mu.Unlock()
	return sf
}

func (sf *sharedFolder) unref() {
	sf.mu.Lock()
	sf.refs--
	last := sf.refs == 0
	sf.mu.Unlock()
	if last {
		sf.d.Close()
	}
}

// folder returns dir opened, with a reference for the caller.
func (fo *Folders) folder(dir string) (*sharedFolder, error) {
	fo.mu.Lock()
	defer fo.mu.Unlock()
	if sf := fo.m[dir]; sf != nil {
		return sf.ref(), nil
	}
	d, err := safefs.OpenFolder(dir, false)
	if err != nil {
		return nil, err // not kept: the next open walks again
	}
	sf := &sharedFolder{d: d, refs: 1} // the Folders' own
	fo.m[dir] = sf
	return sf.ref(), nil
}

// OpenToRemove is [OpenToRemove] in the folder fo has open for the
// pidfile's folder (opened now if it is the first): the same checks (no
// link followed, a regular file, the owner rule, one name), and the handle
// removes the pidfile ([Handle.RemoveIfStale]) in that folder too.
func (fo *Folders) OpenToRemove(path string) (*Handle, error) {
	if fo == nil {
		return OpenToRemove(path)
	}
	unlock := lockPath(path)
	defer unlock()
	if h := ownHandle(path); h != nil {
		return h, nil
	}
	sf, err := fo.folder(filepath.Dir(path))
	if err != nil {
		return nil, describeOpenErr(path, err)
	}
	f, err := openIn(sf.d, path, os.O_RDWR)
	rw := true
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		f, err = openIn(sf.d, path, os.O_RDONLY)
		rw = false
	}
	if err != nil {
		sf.unref()
		return nil, err
	}
	return &Handle{f: f, path: path, rw: rw, dir: sf}, nil
}

// openIn opens the pidfile at path, in d, as openPidfile does.
func openIn(d *safefs.Folder, path string, flag int) (*os.File, error) {
	f, err := d.Open(filepath.Base(path), path, flag, 0)
	if err != nil {
		return nil, describeOpenErr(path, err)
	}
	if err := checkRegularIn(f, path, d); err != nil {
		closeFile(f)
		return nil, err
	}
	return f, nil
}

// Close lets go of the folders; those a handle still has open stay open
// until it is closed.
func (fo *Folders) Close() {
	if fo == nil {
		return
	}
	fo.mu.Lock()
	m := fo.m
	fo.m = map[string]*sharedFolder{}
	fo.mu.Unlock()
	for _, sf := range m {
		sf.unref()
	}
}
