package safefs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// An UnsafeFolderError is a folder that someone other than root or this
// user can write to: owned by another user, or group- or
// world-writable (a sticky folder such as /tmp included). Any file in it
// may have been put there, or renamed there, by that someone, so nothing
// in it is trusted (see [OpenFolder]) unless the folder was accepted
// ([AcceptShared]).
type UnsafeFolderError struct {
	Path string
	UID  int         // the folder's owner
	Mode fs.FileMode // the folder's mode
}

func (e *UnsafeFolderError) Error() string {
	perm := uint32(e.Mode.Perm())
	if e.Mode&fs.ModeSticky != 0 {
		perm |= 0o1000
	}
	return fmt.Sprintf("folder %s (owner uid %d, mode %o) can be written by others than root and this user (uid %d); refusing it (--allow-shared-folders accepts it)",
		e.Path, e.UID, perm, os.Geteuid())
}

// SharedEnv carries the folders a multi accepted ([AcceptShared]) to the
// processes it starts for a node (its exec step, and a node that locks
// its own pidfile), which reach the same folders: absolute paths joined
// by [os.PathListSeparator]. Only those processes read it
// ([AcceptSharedFromEnv]): multi itself accepts a folder only when told
// to, never because of its environment.
const SharedEnv = "MULTI_SHARED_FOLDERS"

// shared holds the folders accepted in this process.
var shared sync.Map

// AcceptShared accepts the folders at paths, for the rest of this
// process, although others than root and this user can write to them:
// [OpenFolder] opens them, and says so ([Folder.Shared]), instead of
// refusing them. Empty paths are ignored.
func AcceptShared(paths ...string) {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			shared.Store(abs, true) // Abs cleans it, as OpenFolder does
		}
	}
}

// AcceptSharedFromEnv accepts the folders [SharedEnv] names: for the
// processes multi starts for a node.
func AcceptSharedFromEnv() {
	AcceptShared(filepath.SplitList(os.Getenv(SharedEnv))...)
}

// Accepted lists the folders [AcceptShared] accepted, as [SharedEnv]'s
// value ("" for none).
func Accepted() string {
	var l []string
	shared.Range(func(k, _ any) bool {
		l = append(l, k.(string))
		return true
	})
	return strings.Join(l, string(os.PathListSeparator))
}

// accepted reports whether the folder at path (absolute and clean) was
// accepted.
func accepted(path string) bool {
	_, ok := shared.Load(path)
	return ok
}

// Shared reports whether the folder is one others than root and this user
// can write to, opened because it was accepted ([AcceptShared]). Nothing
// in it proves that multi wrote it.
func (d *Folder) Shared() bool { return d.shared }

// SharedFolder reports whether the folder at path is one others than root
// and this user can write to, accepted ([AcceptShared]): nothing in it
// proves that multi put it there.
func SharedFolder(path string) bool {
	d, err := OpenFolder(path, false)
	if err != nil {
		return false
	}
	defer d.Close()
	return d.Shared()
}
