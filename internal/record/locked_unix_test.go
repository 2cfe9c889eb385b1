//go:build unix

package record_test

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
)

// Anyone who can read a record can flock it. Records held exclusively by
// another, for the whole test, are still read at once, whole: a reader
// never waits on a lock others can take. The deadline is many times what
// the reads take, and a small part of what waiting on each lock costs.
func TestReadRecordsIgnoresOthersFlock(t *testing.T) {
	t.Parallel()
	rundir := t.TempDir()
	var names []string
	for i := 1; i <= 40; i++ {
		names = append(names, fmt.Sprintf("w%d", i))
	}
	ns, err := nodes.Spec{Names: names, RunDir: rundir, Command: []string{"sleep", "1"}}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range ns {
		if err := record.WriteStarted(rundir, n, nodes.Started{PID: 1000 + i, StartTicks: 7}); err != nil {
			t.Fatal(err)
		}
		// As another user would: opened read-only, locked exclusively.
		f, err := os.Open(record.Path(rundir, n.Name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			t.Fatal(err)
		}
	}
	type read struct {
		recs []nodes.Node
		err  error
	}
	done := make(chan read, 1)
	go func() {
		recs, err := record.ReadAll(rundir)
		for _, n := range recs {
			if _, s, err2 := record.ReadStarted(rundir, n.Name); err2 != nil || s.PID < 1000 {
				err = fmt.Errorf("%s: %+v, %v", n.Name, s, err2)
			}
		}
		done <- read{recs, err}
	}()
	select {
	case r := <-done:
		if r.err != nil || len(r.recs) != len(ns) {
			t.Fatalf("read %d records of %d: %v", len(r.recs), len(ns), r.err)
		}
	case <-time.After(5 * time.Second):
		// The locks are held until the test ends: a reader that waits
		// on each one is still at it.
		t.Fatalf("reading %d records locked by another still not done after 5s", len(ns))
	}
}
