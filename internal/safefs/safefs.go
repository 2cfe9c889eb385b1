// Package safefs opens files under a folder without following a link that
// someone else could have planted.
//
// Multi often runs as root on paths that another user may own, such as a
// node's pidfile, logfile or record in a folder the user gave. Package
// safefs owns the walk that reaches such a folder ([OpenFolder]: no
// untrusted symbolic link followed, on the way or at the end), the
// operations named relative to the folder once reached ([Folder]), and the
// checks on a file opened there ([CheckOwner], [CheckOneLink]); and the
// files whose rule is that walk alone: a node's logfile ([OpenLogfile],
// [OpenLogfileToRead]) and the files multi makes in a folder it holds
// ([Folder.Make], [RemoveIn]). What the other files hold, and how they
// are locked, belongs to the packages that use it: internal/record (node
// records) and nodes/pidfile.
package safefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// An UnsafeLinkError is a symbolic link on the way to a file that someone
// other than root or this user could have planted or swapped; it is not
// followed. Only the unix walk finds them.
type UnsafeLinkError struct {
	Link string
	Why  string
}

func (e *UnsafeLinkError) Error() string {
	return "folder " + e.Link + " is a symbolic link " + e.Why + "; not followed"
}

// DescribeType names the kind of a file that is not a regular one: "a
// directory", "a FIFO", and so on, for messages such as "is a FIFO, not a
// regular file".
func DescribeType(m fs.FileMode) string {
	switch t := m.Type(); {
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	case t&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeDevice != 0:
		return "a device"
	default:
		return "of type " + t.String()
	}
}

// BareErr drops the path and operation from an *fs.PathError, for messages
// that name the file already.
func BareErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// CheckFile returns the stat of f, a file opened in d, once it has passed
// the checks every file multi opens in a folder gets: a regular file ("is
// a FIFO, not a regular file"), not planted by another user ([CheckOwner])
// and with one name ([CheckOneLink]). Its errors do not name the file.
func (d *Folder) CheckFile(f *os.File) (fs.FileInfo, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, BareErr(err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("is %s, not a regular file", DescribeType(st.Mode()))
	}
	dst, err := d.Stat()
	if err != nil {
		return nil, fmt.Errorf("folder: %w", BareErr(err))
	}
	if err := CheckOwner(st, d.Path(), dst); err != nil {
		return nil, err
	}
	if err := CheckOneLink(st); err != nil {
		return nil, err
	}
	return st, nil
}
