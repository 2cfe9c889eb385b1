//go:build unix

package record_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/internal/safefs"
	"github.com/multi-launcher/multi/internal/testhooks"
	"github.com/multi-launcher/multi/internal/testutil"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// The record's temp file swapped for a link to a root file while the
// record is written: its mode is set through the descriptor, so the root
// file keeps mode 0600 (a chmod by path made it 0644).
func TestRecordTempSwapped(t *testing.T) {
	needRoot(t)
	base := t.TempDir()
	secret := filepath.Join(base, "secret")
	unchanged := rootFile(t, secret)
	rundir := filepath.Join(base, "run")
	fifo := filepath.Join(base, "wait")
	syscall.Mkfifo(fifo, 0o600)
	t.Setenv(testhooks.EnvRecordWait, fifo)
	done := make(chan error, 1)
	go func() {
		done <- record.Write(rundir, nodes.Node{Name: "w1", Command: []string{"true"}, PidFile: "/r/w1.pid", LogFile: "/r/w1.log"})
	}()
	tmp := ""
	for deadline := time.Now().Add(30 * time.Second); tmp == ""; {
		m, _ := filepath.Glob(filepath.Join(rundir, ".w1.tmp*"))
		if len(m) > 0 {
			tmp = m[0]
		} else if time.Now().After(deadline) {
			t.Fatal("no temp file appeared")
		} else {
			time.Sleep(time.Millisecond)
		}
	}
	if err := os.Remove(tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, tmp); err != nil {
		t.Fatal(err)
	}
	// Let the writer go on: it waits to open the FIFO for writing.
	f, err := os.Open(fifo)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	t.Logf("WriteRecord: %v", <-done)
	unchanged()
}

// The longest name's files can all be made: its record, and the temp
// file written before the record.
func TestRecordOfTheLongestName(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", nodes.MaxNameLen)
	rundir := t.TempDir()
	if err := record.Write(rundir, nodes.Node{Name: long, Command: []string{"true"}, PidFile: "/r/x.pid", LogFile: "/r/x.log"}); err != nil {
		t.Errorf("WriteRecord of the longest name: %v", err)
	}
}

// WriteRecord removes the temp files of killed writers, which hold no
// flock on the rundir's lock file, and keeps them while someone holds it
// shared, as a writer at work does.
func TestWriteRecordRemovesLeftovers(t *testing.T) {
	t.Parallel()
	rundir := t.TempDir()
	leftover := filepath.Join(rundir, ".w0.tmp123")
	other := filepath.Join(rundir, "w0.tmp123") // not ours: kept
	os.WriteFile(other, nil, 0o644)
	n := nodes.Node{Name: "w1", Command: []string{"true"}, PidFile: "/r/w1.pid", LogFile: "/r/w1.log"}

	os.WriteFile(leftover, nil, 0o644)
	d, err := os.OpenFile(filepath.Join(rundir, ".records.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(d.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	if err := record.Write(rundir, n); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(leftover); err != nil {
		t.Errorf("a temp file removed while a writer may be at work: %v", err)
	}
	d.Close()

	if err := record.Write(rundir, n); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(leftover); err == nil {
		t.Errorf("%s left behind", leftover)
	}
	if _, err := os.Lstat(other); err != nil {
		t.Errorf("%s removed: %v", other, err)
	}
}

// The rundir's lock file is 0600, so that no other user can take its
// flock and so block every start (or every cleaning), and a lock file
// another user planted in a folder others can write is refused.
func TestRunLockPrivate(t *testing.T) {
	needRoot(t)
	t.Parallel()
	rundir := t.TempDir()
	n := nodes.Node{Name: "w1", Command: []string{"true"}, PidFile: "/r/w1.pid", LogFile: "/r/w1.log"}
	lock := filepath.Join(rundir, ".records.lock")
	os.WriteFile(lock, nil, 0o644) // as if made by hand
	if err := record.Write(rundir, n); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(lock); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("lock file: %v, %v; want mode 0600", st.Mode(), err)
	}
	os.Chmod(rundir, 0o777|os.ModeSticky)
	os.Remove(lock)
	os.WriteFile(lock, nil, 0o666)
	os.Chmod(lock, 0o666)
	os.Chown(lock, nobody, nobody)
	var ue *safefs.UnsafeFolderError
	if err := record.Write(rundir, n); !errors.As(err, &ue) {
		t.Errorf("WriteRecord with a planted lock file: %v; want the folder refused", err)
	}
	if st, err := os.Stat(lock); err != nil || st.Mode().Perm() != 0o666 {
		t.Errorf("planted lock file: %v, %v; want it left alone", st.Mode(), err)
	}
}

// A hard link to a root file planted as the pidfile, the logfile or the
// rundir's lock file is refused: the root file is neither truncated,
// written, appended to nor chmod'ed.
func TestRefuseHardLinks(t *testing.T) {
	needRoot(t)
	t.Parallel()
	base := t.TempDir()
	secret := filepath.Join(base, "secret")
	unchanged := rootFile(t, secret)
	dir := filepath.Join(base, "theirs")
	os.Mkdir(dir, 0o755)
	os.Chown(dir, nobody, nobody)
	record.AcceptShared(dir, nil) // else refused before any file is looked at
	for _, name := range []string{"w1.pid", "w1.log", ".records.lock"} {
		if err := os.Link(secret, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	const want = "has 4 hard links"
	check := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", what, err, want)
		}
	}
	lk, err := pidfile.Acquire(filepath.Join(dir, "w1.pid"))
	if err == nil {
		lk.Close()
	}
	check("Acquire", err)
	f, err := safefs.OpenLogfile(filepath.Join(dir, "w1.log"))
	if err == nil {
		f.Close()
	}
	check("OpenLogfile", err)
	// No record is written in a shared folder, so the lock file is not
	// even opened.
	if err := record.Write(dir, nodes.Node{Name: "w1", Command: []string{"true"}, PidFile: "/r/w1.pid", LogFile: "/r/w1.log"}); err != nil {
		t.Errorf("WriteRecord in an accepted shared folder: %v", err)
	}
	if _, err := os.Lstat(record.Path(dir, "w1")); err == nil {
		t.Errorf("a record was written in a shared folder")
	}
	unchanged()
}

// The fixtures these tests share with other packages' (see package
// testutil).
const nobody = testutil.Nobody

var (
	needRoot = testutil.NeedRoot
	rootFile = testutil.RootFile
)
