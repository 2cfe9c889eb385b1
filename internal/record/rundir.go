package record

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/multi-launcher/multi/internal/safefs"
	"github.com/multi-launcher/multi/internal/testhooks"
)

// The rundir's lock file, and the temp files of record writers that died
// before their rename: what keeps a killed start from leaving one behind.

// tempRecord matches the temp files Write makes, and those that
// os.CreateTemp made in earlier versions: ".NAME.tmpDIGITS".
var tempRecord = regexp.MustCompile(`^\..+\.tmp[0-9]+$`)

// runLock is the rundir's lock file (see cleanTemps). Mode 0600: flock
// needs only an open descriptor, so a file others could open would let
// any local user block every start (a lock on the folder itself would).
const runLock = ".records.lock"

// openRunLock opens the rundir's lock file as carefully as a pidfile, and
// with create makes it if it is missing. Only writers create it, so that a
// command that only reads leaves the rundir as it found it.
func openRunLock(d *safefs.Folder, create bool) (*os.File, error) {
	path := filepath.Join(d.Path(), runLock)
	flag := os.O_RDWR
	if create {
		flag |= os.O_CREATE
	}
	f, err := d.Open(runLock, path, flag, 0o600)
	if err != nil {
		return nil, err
	}
	st, err := d.CheckFile(f)
	if err != nil {
		err = fmt.Errorf("%s: %w", path, err)
	} else if st.Mode().Perm() != 0o600 {
		err = f.Chmod(0o600)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// cleanTemps removes the temp files of record writers that died before
// their rename (killed mid-start), when it can take the flock of the
// rundir's lock file lk exclusively: then no writer is at work. A writer
// holds it shared from before its temp file exists until after the
// rename; the kernel drops it when the writer dies.
//
// It reports whether it could look.
func cleanTemps(d *safefs.Folder, lk *os.File) bool {
	if flock(lk, true) != nil {
		return false
	}
	defer funlock(lk)
	entries, err := d.ReadDir()
	if err != nil {
		return false
	}
	for _, e := range entries {
		if tempRecord.MatchString(e.Name()) {
			d.Remove(e.Name()) // in the rundir itself, whatever it is
		}
	}
	return true
}

// cleaned holds the rundirs that cleanTempsOnce has cleaned in this
// process.
var cleaned sync.Map

// cleanTempsOnce is cleanTemps for the first record this process writes in
// d's folder: the leftovers are of writers that died before, and reading a
// folder of N nodes' files at each of 2N record writes made start
// quadratic (a tenth of start's CPU at 1000 nodes on ext4). It is tried
// again at the next write if another writer kept it from cleaning.
func cleanTempsOnce(d *safefs.Folder, lk *os.File) {
	if _, done := cleaned.Load(d.Path()); done {
		return
	}
	if cleanTemps(d, lk) {
		cleaned.Store(d.Path(), true)
	}
}

// lockShared takes the rundir's flock shared, waiting up to about a second
// for a command cleaning leftovers (microseconds) to finish.
func lockShared(lk *os.File) error {
	for try := 0; ; try++ {
		err := flock(lk, false)
		if err != errBusy || try >= 40 {
			if err != nil {
				return fmt.Errorf("cannot lock the folder: %w", err)
			}
			return nil
		}
		// 50µs doubling to 10ms, as a pidfile's brief lock is waited out.
		time.Sleep(time.Duration(50*1000) << min(try, 8))
	}
}

// recordWait runs the tests' hook (nil in production; package
// testhooks) once a record's temp file exists.
func recordWait() {
	if h := testhooks.RecordWait; h != nil {
		h()
	}
}

// cleanRunDir removes the temp files that killed record writers left in
// rundir (see cleanTemps); an absent rundir, one without a lock file (no
// writer ever made a temp file there), or one whose lock file this user
// cannot open, is left alone.
func cleanRunDir(rundir string) {
	d, err := safefs.OpenFolder(rundir, false)
	if err != nil {
		return
	}
	defer d.Close()
	if d.Shared() {
		return // nothing of multi's there (see AcceptShared)
	}
	if lk, err := openRunLock(d, false); err == nil {
		cleanTemps(d, lk)
		lk.Close()
	}
}
