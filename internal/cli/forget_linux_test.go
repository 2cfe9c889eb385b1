package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/internal/testutil"
)

// forget takes the node's record lock before it looks at the node: while
// a start holds it (from reading the record until its process is
// recorded), forget waits and removes nothing; once it is let go, forget
// goes on, and removes the lock file with the record.
func TestForgetWaitsForRecordLock(t *testing.T) {
	dir := t.TempDir()
	killLeftovers(t, dir, "w1")
	if code, out, errs := runCLI(t, "start", "w1", "--rundir", dir, "--", "sleep", "300"); code != exitOK {
		t.Fatalf("start: exit %d, %q, %q", code, out, errs)
	}
	if code, out, errs := runCLI(t, "stopwait", "w1", "--rundir", dir); code != exitOK {
		t.Fatalf("stopwait: exit %d, %q, %q", code, out, errs)
	}
	recordFile := record.Path(dir, "w1")
	lockFile := filepath.Join(dir, ".w1.node.lock")
	// As a start of w1 would.
	lk, err := record.Lock(context.Background(), dir, "w1")
	if err != nil {
		t.Fatal(err)
	}
	unlocked := false
	defer func() {
		if !unlocked {
			lk.Unlock()
		}
	}()
	type result struct {
		code      int
		out, errs string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errs := runCLI(t, "forget", "w1", "--rundir", dir)
		done <- result{code, out, errs}
	}()
	// forget has the lock file open once this process has two
	// descriptors on it: it waits for the lock.
	opened := func() int {
		ents, _ := os.ReadDir("/proc/self/fd")
		n := 0
		for _, e := range ents {
			if to, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && to == lockFile {
				n++
			}
		}
		return n
	}
	testutil.PollUntil(t, "forget to open the record lock file", func() bool {
		select {
		case r := <-done:
			_, err := os.Stat(recordFile)
			t.Fatalf("forget returned while a start held w1's record lock: exit %d, %q, %q, record: %v; want it to wait", r.code, r.out, r.errs, err)
		default:
		}
		return opened() >= 2
	})
	if _, err := os.Stat(recordFile); err != nil {
		t.Errorf("record while forget waits for its lock: %v; want it kept", err)
	}
	unlocked = true
	lk.Unlock()
	r := <-done
	if want := "w1: forgotten (" + recordFile + " removed)\n"; r.code != exitOK || r.out != want || r.errs != "" {
		t.Errorf("forget once the lock was let go: exit %d, %q, %q; want 0, %q", r.code, r.out, r.errs, want)
	}
	for _, p := range []string{recordFile, lockFile} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s after forget: %v; want it removed", p, err)
		}
	}
	// Without a record, the lock forget took leaves no file behind.
	if code, out, _ := runCLI(t, "forget", "w1", "--rundir", dir); code != exitOK || !strings.HasPrefix(out, "w1: no record (") {
		t.Errorf("forget w1 again: exit %d, %q", code, out)
	}
	if _, err := os.Stat(lockFile); !os.IsNotExist(err) {
		t.Errorf("%s after forget of no record: %v; want none", lockFile, err)
	}
}
