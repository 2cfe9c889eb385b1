package integration

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/internal/record"
)

// marked MARK N checks that exactly N live processes (a zombie is gone)
// have MARK in their command line; with a duration as a third argument
// it polls until they are N or the duration has passed.
func cmdMarked(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: marked MARK N [wait]")
	}
	want, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("marked: bad count %q", args[1])
	}
	var wait time.Duration
	if len(args) == 3 {
		if wait, err = time.ParseDuration(args[2]); err != nil {
			ts.Fatalf("marked: bad wait %q", args[2])
		}
	}
	deadline := time.Now().Add(wait)
	for {
		got := marked(args[0])
		if len(got) == want {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%d live processes marked %q (%v); want %d", len(got), args[0], got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// marked returns the live processes whose command line holds mark.
func marked(mark string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(mark)) {
			continue
		}
		if p, err := proc.Read(pid); err == nil && !p.Gone() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// canCgroup reports whether multi gives nodes a cgroup here.
func canCgroup() bool {
	dir, err := os.MkdirTemp("", "cgcheck")
	if err != nil {
		return false
	}
	defer os.Remove(dir)
	c := cgroup.Detect(dir)
	if c.Mode == cgroup.Cgroup {
		cgroup.RemoveParent(c.Parent)
	}
	return c.Mode == cgroup.Cgroup
}

// canLimit reports whether multi can apply a cgroup v2 limit of
// controller (memory, cpu, pids) to the nodes it starts here.
func canLimit(controller string) bool {
	dir, err := os.MkdirTemp("", "cgcheck")
	if err != nil {
		return false
	}
	defer os.Remove(dir)
	c := cgroup.Detect(dir)
	if c.Mode == cgroup.Cgroup {
		defer cgroup.RemoveParent(c.Parent)
	}
	return c.Available(controller) == nil
}

// killCgroups kills what is left in the cgroups of the nodes recorded in
// rundir: a script that fails half way leaks no tree.
func killCgroups(rundir string) {
	ns, _ := record.ReadAll(rundir)
	for _, n := range ns {
		if n.Cgroup != "" {
			cgroup.Kill(n.Cgroup, rundir, n.Name)
			cgroup.WaitEmpty(n.Cgroup, rundir, n.Name, time.Now().Add(10*time.Second), nil)
			cgroup.Remove(n.Cgroup, rundir, n.Name)
		}
	}
	cgroup.Sweep(rundir) // the folders of nodes that ended on their own
}
