//go:build !linux

package cgroup

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// Detect returns Session: cgroups are Linux's.
func Detect(rundir string) Containment {
	return Containment{Mode: Session, Why: "cgroups are Linux's"}
}

// Make is errors.ErrUnsupported off Linux.
func Make(c Containment, name string) (string, *os.File, error) {
	return "", nil, errors.ErrUnsupported
}

// RemoveIdle does nothing off Linux.
func RemoveIdle(path string) error { return nil }

// Open is errors.ErrUnsupported off Linux.
func Open(path string) (*os.File, error) { return nil, errors.ErrUnsupported }

// Join is errors.ErrUnsupported off Linux.
func Join(dirfd int) error { return errors.ErrUnsupported }

// A Tree is what a node's cgroup holds (see the Linux version).
type Tree struct {
	Procs     []int
	Populated bool
	Memory    *int64
	CPUUsec   *int64
	OOMKills  *int64
	Hits      map[string]int64
}

// Read is errors.ErrUnsupported off Linux.
func Read(path, rundir, name string) (Tree, error) { return Tree{}, errors.ErrUnsupported }

// Kill is errors.ErrUnsupported off Linux.
func Kill(path, rundir, name string) error { return errors.ErrUnsupported }

// Signal is errors.ErrUnsupported off Linux.
func Signal(path, rundir, name string, sig syscall.Signal) error { return errors.ErrUnsupported }

// WaitEmpty reports an empty cgroup off Linux: there is none.
func WaitEmpty(path, rundir, name string, deadline time.Time, done <-chan struct{}) (bool, error) {
	return true, nil
}

// Remove does nothing off Linux.
func Remove(path, rundir, name string) error { return nil }

// RemoveNode does nothing off Linux.
func RemoveNode(path, rundir, name string) error { return nil }

// Populated reports no process left: off Linux there are no cgroups.
func Populated(path, rundir, name string) (bool, error) { return false, nil }

// RemoveParent does nothing off Linux.
func RemoveParent(parent string) {}

// KillMade is errors.ErrUnsupported off Linux.
func KillMade(path string) ([]int, error) { return nil, errors.ErrUnsupported }

// Sweep does nothing off Linux.
func Sweep(rundir string) {}

// RunLeaf is the leaf a foreground run moves itself into on Linux.
const RunLeaf = "multi.run"

// A Placement is where a foreground run is (see the Linux version).
type Placement struct {
	Leaf string
	Why  string
}

// RunPlacement says that a run does not move off Linux.
func RunPlacement(rundir string) Placement { return Placement{Why: "cgroups are Linux's"} }

// PlaceRun does nothing off Linux.
func PlaceRun(rundir string) (Placement, func(), error) {
	return Placement{Why: "cgroups are Linux's"}, func() {}, nil
}

// Parents is Linux's; elsewhere there is no cgroup to clear.
type Parents struct{}

// NewParents returns an empty Parents.
func NewParents() *Parents { return &Parents{} }

// Close does nothing.
func (p *Parents) Close() {}

// Clear reports the tree gone: there are no cgroups.
func (p *Parents) Clear(path, rundir, name string) (bool, error) { return true, nil }

// A Scratch is Linux's.
type Scratch struct{}

// MakeScratch: only on Linux.
func MakeScratch(nodeCgroup, rundir, name string) (*Scratch, error) {
	return nil, errors.ErrUnsupported
}

// FD is none.
func (s *Scratch) FD() int { return -1 }

// Close does nothing.
func (s *Scratch) Close() ([]int, error) { return nil, nil }

// available is never asked off Linux, where the mode is Session.
func available(parent, controller string) error { return errors.ErrUnsupported }

// Controllers is errors.ErrUnsupported off Linux.
func Controllers(dir string) ([]string, error) { return nil, errors.ErrUnsupported }

// SetLimits is errors.ErrUnsupported off Linux.
func SetLimits(node *os.File, settings []Setting) error { return errors.ErrUnsupported }
