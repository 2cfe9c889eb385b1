package record_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
	"golang.org/x/sys/unix"
)

func spareTestNode(t *testing.T) (string, nodes.Node) {
	t.Helper()
	rundir := t.TempDir()
	ns, err := nodes.Spec{Names: []string{"w1"}, RunDir: rundir, Command: []string{"sleep", "1"}}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	return rundir, ns[0]
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// Rewriting a record makes and deletes no file once the node has a
// spare: the record and the spare swap, two files in all.
func TestRecordRewriteMakesNoFile(t *testing.T) {
	t.Parallel()
	rundir, n := spareTestNode(t)
	seen := map[uint64]bool{}
	for pid := 100; pid < 106; pid++ {
		if err := record.WriteStarted(rundir, n, nodes.Started{PID: pid, StartTicks: 7}); err != nil {
			t.Fatal(err)
		}
		seen[inode(t, record.Path(rundir, n.Name))] = true
		if _, s, err := record.ReadStarted(rundir, n.Name); err != nil || s.PID != pid {
			t.Fatalf("after writing pid %d: %+v, %v", pid, s, err)
		}
	}
	if len(seen) > 2 {
		t.Errorf("the record was %d files over 6 writes; want 2 (the record and its spare, swapped)", len(seen))
	}
	if err := record.Remove(rundir, n.Name); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(rundir); len(ents) != 1 {
		t.Errorf("after RemoveRecord the rundir holds %v; want the lock file only", ents)
	}
}

// A reader holding the old record (now the spare) keeps reading it
// whole: a writer does not rewrite a file a reader has locked.
func TestRecordSpareNotRewrittenWhileRead(t *testing.T) {
	t.Parallel()
	rundir, n := spareTestNode(t)
	path := record.Path(rundir, n.Name)
	if err := record.WriteStarted(rundir, n, nodes.Started{PID: 101, StartTicks: 7}); err != nil {
		t.Fatal(err)
	}
	// A reader opens the record and locks it, as ReadRecord does.
	r, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := syscall.Flock(int(r.Fd()), syscall.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	// Two writes: the first swaps the reader's file out, the second would
	// rewrite it as the spare.
	for _, pid := range []int{102, 103} {
		if err := record.WriteStarted(rundir, n, nodes.Started{PID: pid, StartTicks: 7}); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 4096)
	k, _ := r.ReadAt(buf, 0)
	if string(buf[:k]) != string(before) {
		t.Errorf("the reader's file was rewritten under it:\n%s\nwant\n%s", buf[:k], before)
	}
	if _, s, err := record.ReadStarted(rundir, n.Name); err != nil || s.PID != 103 {
		t.Errorf("record: %+v, %v; want pid 103", s, err)
	}
}

// A spare that is not a file of the record's own (a hard link to another
// file) is not written: the file it links to keeps its text.
func TestRecordSpareRefusesLink(t *testing.T) {
	t.Parallel()
	rundir, n := spareTestNode(t)
	if err := record.Write(rundir, n); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spare := filepath.Join(rundir, "."+n.Name+".spare")
	os.Remove(spare)
	if err := os.Link(victim, spare); err != nil {
		t.Skip("cannot hard-link here:", err)
	}
	if err := record.WriteStarted(rundir, n, nodes.Started{PID: 104, StartTicks: 7}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
		t.Errorf("the linked file became %q", b)
	}
}

// Writers and readers of one record at once: every read is a whole
// record, of one of the writes.
func TestRecordConcurrentRewrites(t *testing.T) {
	t.Parallel()
	rundir, n := spareTestNode(t)
	if err := record.Write(rundir, n); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for w := 0; w < 4; w++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if err := record.WriteStarted(rundir, n, nodes.Started{PID: 1000 + i, StartTicks: 7}); err != nil {
					errs <- err
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				got, _, err := record.ReadStarted(rundir, n.Name)
				if err != nil || got.Name != n.Name {
					errs <- fmt.Errorf("read %d: %+v, %v", i, got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
