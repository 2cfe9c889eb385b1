package nodes

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/multi-launcher/multi/internal/safefs"
)

// An UnsafeFolderError is a folder that others than root and this user
// can write to (owned by another user, or group- or world-writable, a
// sticky one too), refused as the folder of a record, pidfile or logfile
// unless it was accepted ([AcceptShared]). Errors wrap it as a
// *UnsafeFolderError: test with [errors.As]. Its definition, in an
// internal package that go doc does not show, is:
//
//	type UnsafeFolderError struct {
//		Path string
//		UID  int         // the folder's owner
//		Mode fs.FileMode // the folder's mode
//	}
//
//	// Error returns "folder PATH (owner uid UID, mode MODE) can be written
//	// by others than root and this user (uid EUID); refusing it
//	// (--allow-shared-folders accepts it)".
//	func (e *UnsafeFolderError) Error() string
type UnsafeFolderError = safefs.UnsafeFolderError

// AcceptShared accepts, for the rest of this process, rundir (if not
// "") and the folders of each node's pidfile, logfile and file:
// readiness check, although
// others than root and this user may write to them: as the user's
// choice, they are no longer refused with an [UnsafeFolderError]. What
// still holds there: no link followed, and only regular files of root
// or this user with one name are opened. A record in an accepted rundir
// proves nothing, so it is neither written nor read: give such nodes'
// names, files and command each time.
func AcceptShared(rundir string, ns []Node) {
	if rundir != "" {
		safefs.AcceptShared(rundir)
	}
	for _, n := range ns {
		safefs.AcceptShared(filepath.Dir(n.PidFile), filepath.Dir(n.LogFile))
		// And the folder of a file: readiness check, which its node makes.
		if n.Ready.Kind == File {
			safefs.AcceptShared(filepath.Dir(filepath.Clean(n.Ready.Target)))
		}
	}
}

// errShared: records in a shared rundir are not read; to callers, as if
// there were none.
var errShared error = sharedError{}

type sharedError struct{}

func (sharedError) Error() string {
	return "not read: others than root and this user can write to its folder"
}

func (sharedError) Is(target error) bool { return target == fs.ErrNotExist }

// An UnsafeLinkError is a symbolic link on the way to a file that someone
// other than root or this user could have planted or swapped; it is not
// followed. The errors of the records' functions, and of packages
// nodes/pidfile and multi, wrap it as a *UnsafeLinkError: test with
// [errors.As]. Its definition, in an internal package that go doc does
// not show, is:
//
//	type UnsafeLinkError struct {
//		Link string // the link's path
//		Why  string // who could plant or swap it: "owned by uid 1000, who could point it anywhere"
//	}
//
//	// Error returns "folder LINK is a symbolic link WHY; not followed".
//	func (e *UnsafeLinkError) Error() string
type UnsafeLinkError = safefs.UnsafeLinkError

// RemoveRecord removes the record of the node named name from rundir,
// reaching the rundir without following an untrusted link (see Folders
// and links in the package doc), so that a rundir swapped for a link
// cannot make root remove a file elsewhere. The error wraps [fs.ErrNotExist] when there is
// no record.
func RemoveRecord(rundir, name string) error { return removeRecord(rundir, name, nil) }

// removeRecord is [RemoveRecord]; held, when not nil, is the node's
// record lock file as the caller holds it.
func removeRecord(rundir, name string, held *os.File) error {
	if err := CheckName(name); err != nil {
		return err
	}
	path := RecordPath(rundir, name)
	d, err := safefs.OpenFolder(rundir, false)
	if err != nil {
		return fmt.Errorf("record %s: %w", path, err)
	}
	defer d.Close()
	if d.Shared() {
		return fmt.Errorf("record %s: %w", path, errShared)
	}
	if err := d.Remove(filepath.Base(path)); err != nil {
		if held != nil {
			removeRecordLock(d, name, held) // made by the caller's lock
		}
		return fmt.Errorf("record %s: %w", path, safefs.BareErr(err))
	}
	d.Remove(spareName(name)) // the previous record's file, if any
	removeRecordLock(d, name, held)
	return nil
}
