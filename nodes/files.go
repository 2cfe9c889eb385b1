package nodes

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/multi-launcher/multi/internal/safefs"
)

// An UnsafeLinkError is a symbolic link on the way to a file that someone
// other than root or this user could have planted or swapped; it is not
// followed. The errors of [OpenLogfile], [MakeDir], the records' functions
// and package nodes/pidfile's wrap it.
type UnsafeLinkError = safefs.UnsafeLinkError

// OpenLogfile opens the logfile at path for appending, creating it (mode
// 0644) and its missing folders, as carefully as a pidfile: no symbolic
// link followed, at the file or on the way to it (see [safefs.OpenFolder]), no
// hang on a FIFO, and only a regular file that nobody else planted (see
// [safefs.CheckOwner]). Root appends node output to it, so a link planted by
// the folder's owner must not point root at a file of root's.
func OpenLogfile(path string) (*os.File, error) {
	d, err := safefs.OpenFolder(filepath.Dir(path), true)
	if err != nil {
		return nil, fmt.Errorf("logfile %s: %w", path, safefs.BareErr(err))
	}
	defer d.Close()
	f, err := d.Open(filepath.Base(path), path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if safefs.IsSymlinkErr(err) {
		return nil, fmt.Errorf("logfile %s: is a symbolic link (not followed)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("logfile %s: %w", path, safefs.BareErr(err))
	}
	_, err = d.CheckFile(f)
	if err == nil {
		err = safefs.SetBlocking(f)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("logfile %s: %w", path, safefs.BareErr(err))
	}
	return f, nil
}

// MakeDir makes the folder at path and its missing parents (mode 0755),
// without following a symbolic link that someone other than root or this
// user could have planted (see [safefs.OpenFolder]).
func MakeDir(path string) error {
	d, err := safefs.OpenFolder(path, true)
	if err != nil {
		return err
	}
	return d.Close()
}

// RemoveRecord removes the record of the node named name from rundir,
// reaching the rundir without following an untrusted link (see
// [safefs.OpenFolder]), so that a rundir swapped for a link cannot make root
// remove a file elsewhere. The error wraps [fs.ErrNotExist] when there is
// no record.
func RemoveRecord(rundir, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	path := RecordPath(rundir, name)
	d, err := safefs.OpenFolder(rundir, false)
	if err != nil {
		return fmt.Errorf("record %s: %w", path, err)
	}
	defer d.Close()
	if err := d.Remove(filepath.Base(path)); err != nil {
		return fmt.Errorf("record %s: %w", path, safefs.BareErr(err))
	}
	d.Remove(spareName(name)) // the previous record's file, if any
	removeRecordLock(d, name)
	return nil
}
