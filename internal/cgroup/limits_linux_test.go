package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeCgroup makes a plain folder laid out as a rundir's cgroup folder
// with node w1's folder in it: the files SetLimits writes (and the
// parent's cgroup.controllers and cgroup.subtree_control, as given).
// It returns the parent and w1's folder, open as Make holds it.
func fakeCgroup(t *testing.T, controllers, subtree string) (string, *os.File) {
	t.Helper()
	parent := filepath.Join(t.TempDir(), "multi.test")
	node := filepath.Join(parent, "w1")
	if err := os.MkdirAll(node, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"cgroup.controllers": controllers, "cgroup.subtree_control": subtree} {
		if err := os.WriteFile(filepath.Join(parent, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"memory.max", "memory.high", "cpu.max", "pids.max"} {
		if err := os.WriteFile(filepath.Join(node, name), []byte("max\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(node)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return parent, f
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// SetLimits enables each setting's controller in the rundir's folder (the
// one above the node's), once per controller and not when it is on
// already, then writes each value into the node's file of that name.
func TestSetLimitsWritesFiles(t *testing.T) {
	parent, node := fakeCgroup(t, "cpu memory pids\n", "")
	settings := []Setting{
		{Controller: "memory", File: "memory.max", Value: "536870912", Flag: "--memory-max"},
		{Controller: "memory", File: "memory.high", Value: "268435456", Flag: "--memory-high"},
		{Controller: "pids", File: "pids.max", Value: "64", Flag: "--pids-max"},
	}
	if err := SetLimits(node, settings); err != nil {
		t.Fatal(err)
	}
	// The fake file keeps the last write only: the last controller
	// enabled, each once (a second +memory would have been the last).
	if got := readText(t, filepath.Join(parent, "cgroup.subtree_control")); got != "+pids" {
		t.Errorf("cgroup.subtree_control: %q; want the last write +pids", got)
	}
	for file, want := range map[string]string{"memory.max": "536870912", "memory.high": "268435456", "pids.max": "64", "cpu.max": "max\n"} {
		if got := readText(t, filepath.Join(parent, "w1", file)); got != want {
			t.Errorf("%s: %q; want %q", file, got, want)
		}
	}

	// A controller on already is not written again.
	parent, node = fakeCgroup(t, "cpu memory\n", "cpu memory\n")
	if err := SetLimits(node, []Setting{{Controller: "cpu", File: "cpu.max", Value: "50000 100000", Flag: "--cpu-max"}}); err != nil {
		t.Fatal(err)
	}
	if got := readText(t, filepath.Join(parent, "cgroup.subtree_control")); got != "cpu memory\n" {
		t.Errorf("cgroup.subtree_control: %q; want it left as it was", got)
	}
	if got := readText(t, filepath.Join(parent, "w1", "cpu.max")); got != "50000 100000" {
		t.Errorf("cpu.max: %q; want 50000 100000", got)
	}
}

// A file SetLimits cannot write fails it, naming the flag, the value and
// the file; nothing is created, and no link is followed.
func TestSetLimitsRefused(t *testing.T) {
	parent, node := fakeCgroup(t, "memory\n", "memory\n")
	os.Remove(filepath.Join(parent, "w1", "memory.max"))
	err := SetLimits(node, []Setting{{Controller: "memory", File: "memory.max", Value: "1024", Flag: "--memory-max"}})
	if err == nil || !strings.Contains(err.Error(), `--memory-max: cannot write "1024" to the node's memory.max`) {
		t.Errorf("SetLimits without memory.max: %v; want it refused, naming flag, value and file", err)
	}
	if _, err := os.Stat(filepath.Join(parent, "w1", "memory.max")); err == nil {
		t.Error("memory.max was created")
	}

	target := filepath.Join(t.TempDir(), "target")
	os.WriteFile(target, []byte("untouched"), 0o644)
	if err := os.Symlink(target, filepath.Join(parent, "w1", "memory.max")); err != nil {
		t.Fatal(err)
	}
	if err := SetLimits(node, []Setting{{Controller: "memory", File: "memory.max", Value: "1024", Flag: "--memory-max"}}); err == nil {
		t.Error("SetLimits wrote through a link at memory.max")
	}
	if got := readText(t, target); got != "untouched" {
		t.Errorf("the link's target: %q; want it untouched", got)
	}

}

// Available says, for a controller the rundir's folder does not list,
// which folder it looked at and what it lists; under Session, that the
// nodes have no cgroup of their own.
func TestAvailable(t *testing.T) {
	parent, _ := fakeCgroup(t, "cpu pids\n", "")
	c := Containment{Mode: Cgroup, Parent: parent}
	if err := c.Available("pids"); err != nil {
		t.Errorf("Available(pids) with pids listed: %v", err)
	}
	err := c.Available("memory")
	want := "controller memory not available in the cgroup v2 subtree multi owns: " + parent + "; its cgroup.controllers lists cpu pids"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Available(memory): %v; want %q", err, want)
	}
	err = Containment{Mode: Session, Why: "MULTI_CONTAINMENT=session"}.Available("memory")
	if err == nil || !strings.Contains(err.Error(), "their containment is their session (MULTI_CONTAINMENT=session)") {
		t.Errorf("Available under Session: %v; want the session named", err)
	}
}

// read counts what a node's tree ran into from the files the kernel
// keeps in its cgroup folder: OOM kills from memory.events' oom_kill, and
// each limit's hits (memory.events' max and high, pids.events' max,
// cpu.stat's nr_throttled); a controller's counts only where its file is.
func TestReadLimitHits(t *testing.T) {
	_, node := fakeCgroup(t, "cpu memory pids\n", "")
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(node.Name(), name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cgroup.events", "populated 0\nfrozen 0\n")
	write("cpu.stat", "usage_usec 1200\nuser_usec 1000\nsystem_usec 200\n")
	tr, err := read(node)
	if err != nil {
		t.Fatal(err)
	}
	if tr.OOMKills != nil || tr.Hits != nil || tr.CPUUsec == nil || *tr.CPUUsec != 1200 {
		t.Fatalf("without the memory, pids and cpu controllers' files: OOMKills %v, Hits %v, CPUUsec %v", tr.OOMKills, tr.Hits, tr.CPUUsec)
	}
	write("memory.events", "low 0\nhigh 7\nmax 5\noom 2\noom_kill 2\noom_group_kill 0\n")
	write("pids.events", "max 3\n")
	write("cpu.stat", "usage_usec 1200\nnr_periods 40\nnr_throttled 9\nthrottled_usec 800\n")
	if tr, err = read(node); err != nil {
		t.Fatal(err)
	}
	if tr.OOMKills == nil || *tr.OOMKills != 2 {
		t.Errorf("OOMKills = %v, want 2", tr.OOMKills)
	}
	want := map[string]int64{"memory.max": 5, "memory.high": 7, "pids.max": 3, "cpu.max": 9}
	if len(tr.Hits) != len(want) {
		t.Errorf("Hits = %v, want %v", tr.Hits, want)
	}
	for k, v := range want {
		if tr.Hits[k] != v {
			t.Errorf("Hits[%s] = %d, want %d", k, tr.Hits[k], v)
		}
	}
}
