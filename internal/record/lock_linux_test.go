package record_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/multi-launcher/multi/internal/record"
)

// A node's record lock is held by one at a time, in one process as
// across processes (a flock per open file), is private to its owner, and
// goes with the record once nobody holds it.
func TestRecordLock(t *testing.T) {
	t.Parallel()
	rundir, n := spareTestNode(t)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	lk, err := record.Lock(context.Background(), rundir, n.Name)
	if err != nil {
		t.Fatal(err)
	}
	lockFile := filepath.Join(rundir, "."+n.Name+".node.lock")
	if st, err := os.Stat(lockFile); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("lock file: %v, %v; want mode 0600", st, err)
	}
	// Held: a second locker waits, here until its (ended) context says no.
	if _, err := record.Lock(done, rundir, n.Name); !errors.Is(err, context.Canceled) {
		t.Errorf("LockRecord while held: %v; want it to wait (context.Canceled)", err)
	}
	if err := record.Write(rundir, n); err != nil {
		t.Fatal(err)
	}
	// Held: RemoveRecord leaves the lock file.
	if err := record.Remove(rundir, n.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lockFile); err != nil {
		t.Errorf("lock file removed while held: %v", err)
	}
	lk.Unlock()
	lk2, err := record.Lock(done, rundir, n.Name)
	if err != nil {
		t.Fatalf("LockRecord once let go: %v", err)
	}
	lk2.Unlock()
	if err := record.Write(rundir, n); err != nil {
		t.Fatal(err)
	}
	if err := record.Remove(rundir, n.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lockFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file after RemoveRecord: %v; want it removed", err)
	}
}
