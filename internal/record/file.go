package record

// A record's file: written through the node's spare file (or a temp file)
// and swapped into place, read under a shared flock.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/multi-launcher/multi/internal/safefs"
)

// writeSynced writes data to f, a new or emptied file, makes it 0644
// through the descriptor (the name may have been swapped), and syncs it
// (on disk, so that a power loss cannot leave an empty record behind the
// rename; on a tmpfs such as /run it costs nothing).
func writeSynced(f *os.File, data []byte) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	return err
}

// errNoSpare: there is no spare file to write the record in (see
// writeSpare), or it cannot be used now.
var errNoSpare = errors.New("no spare record file")

// spareName is the file that held a node's previous record: the next
// write of the record goes to it and then swaps it with the record, so
// that rewriting a record makes and deletes no file. On a filesystem
// such as this machine's ext4 (no journal), every file made costs in
// proportion to the files deleted there in the last half minute.
func spareName(name string) string { return "." + name + ".spare" }

// writeSpare writes data to the node's spare file and swaps it with its
// record, at path (renameat2 RENAME_EXCHANGE): readers see the old record
// or the new one, whole, as with a rename. The writer holds the spare's
// flock exclusively from before it checks the spare is still at its name
// until the swap, so two writers never write one file; a spare that is
// busy, missing, or not as carefully kept as a record (a link, another
// user's) is not used: errNoSpare, and the caller makes a temp file.
func writeSpare(d *safefs.Folder, name, path string, data []byte) error {
	spare := spareName(name)
	f, err := d.Open(spare, path, os.O_WRONLY, 0)
	if err != nil {
		return errNoSpare
	}
	if _, err := d.CheckFile(f); err != nil || flock(f, true) != nil || !d.SameFile(spare, f) || f.Truncate(0) != nil {
		f.Close()
		return errNoSpare
	}
	// Closed only after the swap: the flock keeps other writers off the
	// file until it is the record.
	defer f.Close()
	if err := writeSynced(f, data); err != nil {
		return err
	}
	if err := d.Exchange(spare, filepath.Base(path)); err != nil {
		// The record or the spare was removed meanwhile (forget), or
		// the filesystem has no exchange: a temp file does it.
		return errNoSpare
	}
	return nil
}

// maxRecord bounds the size of a node record: a real one is well under a
// kilobyte, and a planted huge file must not be read into memory.
const maxRecord = 1 << 20

// readRecordFile reads a record without following a symbolic link or
// hanging on a FIFO, and refuses anything but a regular file, a file that
// another user planted in a folder others can write to (a record holds a
// command that restart runs), and a file over [maxRecord] bytes. An absent
// file gives an error wrapping [fs.ErrNotExist]. d is its folder, or nil
// to open it.
func readRecordFile(d *safefs.Folder, path string) ([]byte, error) {
	return readRecordFileTry(d, path, 3)
}

func readRecordFileTry(d *safefs.Folder, path string, retry int) ([]byte, error) {
	if d == nil {
		var err error
		if d, err = safefs.OpenFolder(filepath.Dir(path), false); err != nil {
			return nil, err
		}
		defer d.Close()
	}
	if d.Shared() {
		return nil, errShared
	}
	f, err := d.Open(filepath.Base(path), path, os.O_RDONLY, 0)
	if err != nil {
		if safefs.IsSymlinkErr(err) {
			return nil, errors.New("is a symbolic link (not followed)")
		}
		return nil, safefs.BareErr(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, safefs.BareErr(err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("is %s, not a regular file", safefs.DescribeType(st.Mode()))
	}
	dst, err := d.Stat()
	if err != nil {
		return nil, safefs.BareErr(err)
	}
	if err := safefs.CheckOwner(st, d.Path(), dst); err != nil {
		return nil, err
	}
	// A writer rewrites a record's old file, once swapped out, as the
	// next record (writeSpare), under its exclusive flock: a shared flock
	// keeps it from starting on the file being read here, and the file
	// still at its name once locked is the record. The flock is tried,
	// never waited for: anyone who can read a record can lock it, and
	// another user must not slow root's commands. Locked by another (a
	// writer for microseconds, or anyone for ever), the file is read
	// twice instead, and taken only whole and unchanged: a writer cannot
	// rewrite it while the other holds its flock either.
	locked := flock(f, false) == nil
	b, err := readAllAt(f)
	if err != nil {
		return nil, safefs.BareErr(err)
	}
	if len(b) > maxRecord {
		return nil, fmt.Errorf("larger than %d bytes", maxRecord)
	}
	stable := locked
	if !locked {
		again, err := readAllAt(f)
		st2, serr := f.Stat()
		stable = err == nil && serr == nil && bytes.Equal(b, again) && json.Valid(b) &&
			st2.Size() == int64(len(b)) && st2.ModTime().Equal(st.ModTime())
	}
	if !stable || !d.SameFile(filepath.Base(path), f) {
		if retry > 0 {
			return readRecordFileTry(d, path, retry-1)
		}
		if !stable {
			return nil, errors.New("rewritten while being read, again and again")
		}
		// Whole, if already swapped out: as a reader an instant earlier
		// would have read it.
	}
	return b, nil
}

// readAllAt reads f from its start, up to one byte over [maxRecord], so
// that it can be read again from the same descriptor.
func readAllAt(f *os.File) ([]byte, error) {
	return io.ReadAll(io.LimitReader(io.NewSectionReader(f, 0, maxRecord+1), maxRecord+1))
}

// recordBuf is an encoder of records and the buffer it writes to, kept
// for the next record: a start encodes about four records a node (two
// checks, two writes), each in a buffer of its own otherwise.
type recordBuf struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var recordBufs = sync.Pool{New: func() any {
	rb := new(recordBuf)
	rb.enc = json.NewEncoder(&rb.buf)
	rb.enc.SetIndent("", "  ")
	return rb
}}
