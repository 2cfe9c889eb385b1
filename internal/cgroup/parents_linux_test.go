package cgroup

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Clear, a stop's look at a node's folder relative to the rundir's held
// folder, leaves a folder alone that a start holds (Make to its node's
// join) or that a process is left in, says which, and removes an empty
// idle one; the rundir's folder stays for removeParents.
func TestClearLeavesAFolderBeingFilledOrPopulated(t *testing.T) {
	rundir, c := cgroupRundir(t)
	ps := NewParents()
	defer ps.Close()
	path, held, err := Make(c, "w1")
	if err != nil {
		t.Fatal(err)
	}
	if empty, err := ps.Clear(path, rundir, "w1"); !empty || err != nil {
		held.Close()
		t.Fatalf("Clear of a held empty folder = %v, %v; want true, nil", empty, err)
	}
	if _, err := os.Stat(path); err != nil {
		held.Close()
		t.Fatalf("Clear removed a folder a start was filling: %v", err)
	}
	held.Close()

	end := sleepIn(t, path)
	if empty, err := ps.Clear(path, rundir, "w1"); empty || err != nil {
		t.Fatalf("Clear of a populated folder = %v, %v; want false, nil", empty, err)
	}
	end()
	if _, err := WaitEmpty(path, rundir, "w1", time.Now().Add(30*time.Second), nil); err != nil {
		t.Fatal(err)
	}
	if empty, err := ps.Clear(path, rundir, "w1"); !empty || err != nil {
		t.Fatalf("Clear of an emptied folder = %v, %v; want true, nil", empty, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s after Clear: %v; want it removed", path, err)
	}
	if _, err := os.Stat(c.Parent); err != nil {
		t.Fatalf("Clear removed the rundir's folder: %v", err)
	}
	// Gone already: nothing left, nothing to say.
	if empty, err := ps.Clear(path, rundir, "w1"); !empty || err != nil {
		t.Fatalf("Clear of a removed folder = %v, %v; want true, nil", empty, err)
	}
	// A path multi did not make is refused, as by every other call.
	if _, err := ps.Clear(filepath.Join(filepath.Dir(c.Parent), "other", "w1"), rundir, "w1"); !errors.Is(err, ErrNotMine) {
		t.Fatalf("Clear of another cgroup: %v; want ErrNotMine", err)
	}
}
