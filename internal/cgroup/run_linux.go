package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/multi-launcher/multi/internal/safefs"
)

// RunLeaf is the leaf a foreground run moves itself into, in its own
// cgroup, before it starts nodes there (see [PlaceRun]). [Detect] makes a
// run's nodes' folders beside it, not under it.
const RunLeaf = "multi.run"

// A Placement is where a foreground run is in the cgroup v2 hierarchy.
type Placement struct {
	// Leaf is the leaf it moved into ("" if it did not move).
	Leaf string
	// Why says why it moved, or why not.
	Why string
}

// runPlace finds this process's cgroup folder for rundir's nodes and
// whether a run there should move into a leaf first: when the folder is
// the root of this cgroup namespace (in a container, /proc/self/cgroup
// says 0::/) or holds other processes. Under the no-internal-processes
// rule a cgroup that holds processes cannot enable controllers for the
// folders under it: the nodes'.
func runPlace(rundir string) (dir string, move bool, why string) {
	c := Detect(rundir)
	if c.Mode != Cgroup {
		return "", false, "containment " + c.Mode + ": " + c.Why
	}
	dir = filepath.Dir(c.Parent)
	own, err := selfCgroup()
	if err != nil {
		return "", false, err.Error()
	}
	if filepath.Base(own) == RunLeaf {
		return dir, false, "in its leaf " + filepath.Join(dir, RunLeaf) + " already"
	}
	if own == "/" {
		return dir, true, "its cgroup " + dir + " is the root of its cgroup namespace"
	}
	d, err := safefs.OpenFolder(dir, false)
	if err != nil {
		return "", false, err.Error()
	}
	defer d.Close()
	b, err := readIn(d.File(), "cgroup.procs")
	if err != nil {
		return "", false, fmt.Sprintf("cgroup %s: %v", dir, err)
	}
	for _, f := range strings.Fields(string(b)) {
		if pid, _ := strconv.Atoi(f); pid != os.Getpid() {
			return dir, true, "its cgroup " + dir + " holds other processes"
		}
	}
	return dir, false, "alone in its cgroup " + dir
}

// RunPlacement says what [PlaceRun] would do here for rundir, without
// moving anything: for multi check.
func RunPlacement(rundir string) Placement {
	dir, move, why := runPlace(rundir)
	if !move {
		return Placement{Why: why}
	}
	return Placement{Leaf: filepath.Join(dir, RunLeaf), Why: why}
}

// PlaceRun moves this process, a foreground run of rundir's nodes, into
// the leaf RunLeaf of its cgroup where [RunPlacement] says so, before it
// starts any node: its nodes' cgroups, made beside the leaf, could then
// have controllers enabled for them. back moves the process back and
// removes the leaf once empty (a library caller gets its process back as
// it was); it does nothing where PlaceRun did not move.
func PlaceRun(rundir string) (p Placement, back func(), err error) {
	back = func() {}
	dir, move, why := runPlace(rundir)
	p.Why = why
	if !move {
		return p, back, nil
	}
	leaf := filepath.Join(dir, RunLeaf)
	c := Containment{Mode: Cgroup, Parent: dir}
	var f *os.File
	for try := 0; try < makeTries; try++ {
		// The leaf, held: no sweep or other run removes it before this
		// process is in it.
		if f, err = makeOnce(c, RunLeaf); !errors.Is(err, os.ErrNotExist) {
			break
		}
	}
	if err != nil {
		return p, back, fmt.Errorf("cgroup %s: %w", leaf, err)
	}
	defer f.Close()
	if err := Join(int(f.Fd())); err != nil {
		return p, back, fmt.Errorf("cgroup %s: moving into it: %w", leaf, err)
	}
	p.Leaf = leaf
	back = func() {
		d, err := safefs.OpenFolder(dir, false)
		if err != nil {
			return
		}
		defer d.Close()
		if Join(int(d.File().Fd())) == nil {
			removeIdle(int(d.File().Fd()), RunLeaf) // EBUSY: another run's in it
		}
	}
	return p, back, nil
}
