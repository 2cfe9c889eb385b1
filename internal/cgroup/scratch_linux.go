package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A Scratch is a leaf cgroup folder beside a node's own, for one
// short-lived command run for the node (an exec check): the command
// starts in it (clone3's CLONE_INTO_CGROUP, [Scratch.FD]), so that what
// it leaves, a daemon that left its session included, is killed with the
// folder ([Scratch.Close]).
type Scratch struct {
	path string
	f    *os.File // the folder, held (see Make) until Close
}

// scratchSeq makes each Scratch's name this process's own.
var scratchSeq atomic.Uint64

// scratchPrefix begins every Scratch's name: no node's name begins with
// a dot.
const scratchPrefix = ".check-"

// MakeScratch makes a Scratch beside the node's cgroup folder at
// nodeCgroup (a path from its record: [Check] passed for rundir and the
// node's name).
func MakeScratch(nodeCgroup, rundir, name string) (*Scratch, error) {
	if err := Check(nodeCgroup, rundir, name); err != nil {
		return nil, err
	}
	leaf := scratchPrefix + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(scratchSeq.Add(1), 10)
	path, f, err := Make(Containment{Mode: Cgroup, Parent: filepath.Dir(nodeCgroup)}, leaf)
	if err != nil {
		return nil, err
	}
	return &Scratch{path: path, f: f}, nil
}

// FD is the folder's descriptor, for SysProcAttr.CgroupFD.
func (s *Scratch) FD() int { return int(s.f.Fd()) }

// scratchWait bounds how long Close waits for what it killed to be gone.
const scratchWait = 2 * time.Second

// Close kills whatever is left in the folder (cgroup.kill), waits for it
// to be gone, and removes the folder. It returns the pids it killed.
func (s *Scratch) Close() ([]int, error) {
	defer s.f.Close()
	t, err := read(s.f)
	if err != nil {
		return nil, err
	}
	if t.Populated {
		fd, err := unix.Openat(s.FD(), "cgroup.kill", unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			return t.Procs, fmt.Errorf("cgroup %s: %w", s.path, err)
		}
		_, err = unix.Write(fd, []byte("1"))
		unix.Close(fd)
		if err != nil {
			return t.Procs, fmt.Errorf("cgroup %s: cgroup.kill: %w", s.path, err)
		}
		for deadline, delay := time.Now().Add(scratchWait), pollFirst; ; delay = min(2*delay, pollCap) {
			now, err := read(s.f)
			if err != nil || !now.Populated || time.Now().After(deadline) {
				break
			}
			time.Sleep(delay)
		}
	}
	unix.Flock(s.FD(), unix.LOCK_UN) // ours: removeIdle takes the folder exclusively
	if err := RemoveIdle(s.path); err != nil {
		return t.Procs, fmt.Errorf("cgroup %s: %w", s.path, err)
	}
	return t.Procs, nil
}
