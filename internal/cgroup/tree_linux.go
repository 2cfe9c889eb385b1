package cgroup

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/multi-launcher/multi/internal/proc"
	"golang.org/x/sys/unix"
)

// A Tree is what a node's cgroup holds.
type Tree struct {
	// Procs are the pids of its processes, in it and in the folders a
	// node made under it; this process and its ancestors left out.
	Procs []int
	// Spared are this process and its ancestors, found in it (a verb run
	// from inside a node): never counted, waited for nor signalled.
	Spared []int
	// Populated: a process (but a spared one) is left in it or under it.
	Populated bool
	// Memory is memory.current, CPUUsec cpu.stat's usage_usec; nil
	// where the controller is not enabled.
	Memory  *int64
	CPUUsec *int64
	// OOMKills is memory.events' oom_kill: processes of the tree the
	// kernel's OOM killer killed (nil without the memory controller).
	// Hits counts, by the limit's file (memory.max, memory.high,
	// pids.max, cpu.max), the times the tree ran into it: memory.events'
	// max and high, pids.events' max, cpu.stat's nr_throttled; only the
	// enabled controllers' are there.
	OOMKills *int64
	Hits     map[string]int64
}

// Read returns what the node's cgroup at path holds; fs.ErrNotExist when
// there is no such folder.
func Read(path, rundir, name string) (Tree, error) {
	f, err := openNode(path, rundir, name)
	if err != nil {
		return Tree{}, err
	}
	defer f.Close()
	return read(f)
}

func read(f *os.File) (Tree, error) {
	var t Tree
	ev, err := readIn(f, "cgroup.events")
	if err != nil {
		return t, fmt.Errorf("cgroup %s: %w", f.Name(), err)
	}
	populated := bytes.Contains(ev, []byte("populated 1"))
	pids := procsIn(int(f.Fd()), populated)
	for _, pid := range pids {
		if spared(pid) {
			t.Spared = append(t.Spared, pid)
		} else {
			t.Procs = append(t.Procs, pid)
		}
	}
	t.Populated = populated && (len(t.Spared) == 0 || len(t.Procs) > 0)
	if b, err := readIn(f, "memory.current"); err == nil {
		if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
			t.Memory = &v
		}
	}
	cpu := keyed(f, "cpu.stat")
	if v, ok := cpu["usage_usec"]; ok {
		t.CPUUsec = &v
	}
	mem, pev := keyed(f, "memory.events"), keyed(f, "pids.events")
	if v, ok := mem["oom_kill"]; ok {
		t.OOMKills = &v
	}
	for _, h := range []struct {
		limit string
		in    map[string]int64
		key   string
	}{{"memory.max", mem, "max"}, {"memory.high", mem, "high"}, {"pids.max", pev, "max"}, {"cpu.max", cpu, "nr_throttled"}} {
		if v, ok := h.in[h.key]; ok {
			if t.Hits == nil {
				t.Hits = map[string]int64{}
			}
			t.Hits[h.limit] = v
		}
	}
	return t, nil
}

// keyed reads a flat-keyed cgroup file ("key value" lines: cpu.stat,
// memory.events); nil where it cannot be read.
func keyed(f *os.File, name string) map[string]int64 {
	b, err := readIn(f, name)
	if err != nil {
		return nil
	}
	m := map[string]int64{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, " "); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				m[k] = n
			}
		}
	}
	return m
}

// procsIn returns the pids in the cgroup folder dirfd and, where it has
// folders under it and is populated, in them.
func procsIn(dirfd int, populated bool) []int {
	var pids []int
	if b, err := readAt(dirfd, "cgroup.procs"); err == nil {
		for _, l := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(l); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	if !populated {
		return pids
	}
	if st, err := readAt(dirfd, "cgroup.stat"); err != nil || bytes.Contains(st, []byte("nr_descendants 0\n")) {
		return pids
	}
	dup, err := unix.Openat(dirfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return pids
	}
	d := os.NewFile(uintptr(dup), "cgroup")
	defer d.Close()
	ents, _ := d.ReadDir(-1)
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		fd, err := unix.Openat(dirfd, e.Name(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		ev, _ := readAt(fd, "cgroup.events")
		pids = append(pids, procsIn(fd, bytes.Contains(ev, []byte("populated 1")))...)
		unix.Close(fd)
	}
	return pids
}

// ancestry maps this process and its ancestors to their start times:
// a verb run from inside a node's cgroup must not count, wait for or
// kill them. Learnt once; a pid is one of them only while its start time
// is the same (see spared).
var ancestry = sync.OnceValue(func() map[int]uint64 {
	kin := map[int]uint64{}
	for pid := os.Getpid(); pid > 1; {
		p, err := proc.Read(pid)
		if err != nil || kin[pid] != 0 {
			break
		}
		kin[pid] = max(p.StartTicks, 1)
		pid = p.PPID
	}
	return kin
})

// spared reports whether pid is this process or one of its ancestors.
func spared(pid int) bool {
	start, ok := ancestry()[pid]
	if !ok {
		return false
	}
	p, err := proc.Read(pid)
	return err == nil && max(p.StartTicks, 1) == start
}

// signalEach sends sig to each process of t, the tree of the cgroup
// folder f, but the spared ones: each pinned by a pidfd, then seen still
// in the tree, then signalled through the pidfd. For a cgroup this
// process is in, which cgroup.kill and cgroup.freeze would take too.
func signalEach(f *os.File, t Tree, sig syscall.Signal) {
	for _, pid := range t.Procs {
		if pid <= 1 || pid == os.Getpid() {
			continue
		}
		pfd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue
		}
		if now, err := read(f); err == nil && slices.Contains(now.Procs, pid) {
			unix.PidfdSendSignal(pfd, sig, nil, 0)
		}
		unix.Close(pfd)
	}
}
