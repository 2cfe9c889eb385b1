//go:build unix

package logwriter

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/multi-launcher/multi/internal/safefs"
)

// A Rotator is a logfile kept under a size: a write that would take it
// past the size is cut after its last whole line that fits, the file is
// renamed to NAME.1 (NAME.1 to NAME.2, and so on; the oldest beyond the
// kept count removed) and a new file is created at NAME for the rest.
// No file ever grows past the size: a line is split only when it is
// longer than a whole file, or came in pieces (a write that ended
// within it) and the size falls within it. Every name is reached
// through the folder's descriptor, opened as carefully as the
// pidfile's, and no link is followed.
type Rotator struct {
	dir     *safefs.Folder
	name    string // the logfile's name in dir
	path    string
	max     int64
	keep    int
	f       *os.File
	size    int64
	stalled int64 // size at a rotation that failed; retried a file later
}

// Open opens the logfile at path for appending, to be kept under
// maxSize bytes with keep rotated files; rotated files beyond keep left
// from an earlier, larger keep are removed.
func Open(path string, maxSize int64, keep int) (*Rotator, error) {
	d, err := safefs.OpenFolder(filepath.Dir(path), true)
	if err != nil {
		return nil, fmt.Errorf("logfile %s: %w", path, safefs.BareErr(err))
	}
	r := &Rotator{dir: d, name: filepath.Base(path), path: path, max: maxSize, keep: keep, stalled: -1}
	if err := r.open(); err != nil {
		d.Close()
		return nil, err
	}
	r.prune()
	return r, nil
}

// open opens the file at the logfile's name, creating it, and makes it
// the one written.
func (r *Rotator) open() error {
	f, err := r.dir.OpenLogfile(r.name, r.path)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("logfile %s: %w", r.path, safefs.BareErr(err))
	}
	if r.f != nil {
		r.f.Close()
	}
	r.f, r.size = f, st.Size()
	return nil
}

// Write writes p, rotating the file where p would take it past the
// size. An error is the first write's or rotation's that failed; a
// failed rotation leaves the file growing, retried once it has grown by
// the size again.
func (r *Rotator) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		room := r.max - r.size
		if int64(len(p)) <= room || r.stalled >= 0 && r.size-r.stalled < r.max {
			m, err := r.f.Write(p)
			r.size += int64(m)
			return n + m, err
		}
		cut := 0
		if room > 0 {
			cut = bytes.LastIndexByte(p[:room], '\n') + 1
			if cut == 0 && r.size == 0 {
				cut = int(room) // one line longer than a whole file
			}
		}
		if cut > 0 {
			m, err := r.f.Write(p[:cut])
			r.size += int64(m)
			n += m
			if err != nil {
				return n, err
			}
			p = p[cut:]
		}
		if err := r.Rotate(); err != nil {
			r.stalled = r.size
			return n, err
		}
	}
	return n, nil
}

// Rotate moves the logfile aside now, as a write past the size does.
func (r *Rotator) Rotate() error {
	if r.keep == 0 {
		if err := r.dir.Remove(r.name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	} else {
		if err := r.dir.Remove(r.backup(r.keep)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		for i := r.keep - 1; i >= 1; i-- {
			if err := r.dir.Rename(r.backup(i), r.backup(i+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		if err := r.dir.Rename(r.name, r.backup(1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	// The file just renamed stays open, and written, until a new one is.
	if err := r.open(); err != nil {
		return err
	}
	r.stalled = -1
	return nil
}

// backup is the name of the i-th newest rotated file.
func (r *Rotator) backup(i int) string { return r.name + "." + strconv.Itoa(i) }

// prune removes the rotated files numbered beyond keep.
func (r *Rotator) prune() {
	ents, err := r.dir.ReadDir()
	if err != nil {
		return
	}
	for _, e := range ents {
		num, ok := strings.CutPrefix(e.Name(), r.name+".")
		if i, err := strconv.Atoi(num); ok && err == nil && i > r.keep && strconv.Itoa(i) == num && e.Type().IsRegular() {
			r.dir.Remove(e.Name())
		}
	}
}

// Close closes the logfile and its folder.
func (r *Rotator) Close() error {
	err := r.f.Close()
	r.dir.Close()
	return err
}
