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

// Clears that run at once (a stop's pool and its signalling goroutine)
// share the rundir's held folder. One that finds its node's folder gone
// drops the held folder from the Parents, but closes it only in Close:
// another Clear may be using its descriptor, whose number, once closed,
// could name any folder opened next. Run under -race: a close there is a
// data race with the other's use.
func TestClearsAtOnceKeepTheHeldFolderOpen(t *testing.T) {
	rundir, c := cgroupRundir(t)
	for round := 0; round < 20; round++ {
		ps := NewParents()
		names := []string{"w1", "w2", "w3"}
		paths := make([]string, len(names))
		for i, name := range names {
			path, held, err := Make(c, name)
			if err != nil {
				ps.Close()
				t.Fatal(err)
			}
			held.Close()
			paths[i] = path
		}
		gone := filepath.Join(c.Parent, "gone")
		// The held folder is opened first, so that every Clear below uses it.
		if empty, err := ps.Clear(gone, rundir, "gone"); !empty || err != nil {
			ps.Close()
			t.Fatalf("Clear of a missing folder = %v, %v; want true, nil", empty, err)
		}
		if _, err := ps.parent(c.Parent); err != nil {
			ps.Close()
			t.Fatal(err)
		}
		errs := make(chan error, len(names)+1)
		for i, name := range names {
			go func() {
				empty, err := ps.Clear(paths[i], rundir, name)
				if err == nil && !empty {
					err = errors.New(name + ": not empty")
				}
				errs <- err
			}()
		}
		go func() {
			_, err := ps.Clear(gone, rundir, "gone")
			errs <- err
		}()
		for range len(names) + 1 {
			if err := <-errs; err != nil {
				ps.Close()
				t.Fatal(err)
			}
		}
		ps.Close()
		for _, path := range paths {
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s after Clear: %v; want it removed", path, err)
			}
		}
	}
}
