package cgroup

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A recorded cgroup path that is not multi.<id of rundir>/<node> is never
// read or written: a record naming another cgroup (a service's, another
// rundir's) cannot make a stop kill it.
func TestCheckRefusesOtherCgroups(t *testing.T) {
	rundir := "/run/multi"
	mine := filepath.Join("/sys/fs/cgroup/unified", ParentName(rundir), "w1")
	if err := Check(mine, rundir, "w1"); err != nil {
		t.Fatalf("Check(%s): %v", mine, err)
	}
	for _, p := range []string{
		"/sys/fs/cgroup/unified/system.slice/w1",
		filepath.Join("/sys/fs/cgroup/unified", ParentName("/other"), "w1"),
		filepath.Join("/sys/fs/cgroup/unified", ParentName(rundir), "w2"),
		"/sys/fs/cgroup/unified/" + ParentName(rundir) + "/w1/../w1",
		"sys/fs/cgroup/unified/" + ParentName(rundir) + "/w1",
		"/sys/fs/cgroup/unified",
	} {
		if err := Check(p, rundir, "w1"); !errors.Is(err, ErrNotMine) {
			t.Errorf("Check(%s) = %v; want ErrNotMine", p, err)
		}
	}
}

// Kill through a record that names a cgroup multi did not make kills
// nothing there.
func TestKillLeavesOthersAlone(t *testing.T) {
	c := Detect(t.TempDir())
	if os.Geteuid() != 0 || c.Mode != Cgroup {
		t.Skipf("needs root and a cgroup v2 folder multi can make (%s)", c.Why)
	}
	RemoveParent(c.Parent)
	// Another cgroup, with a process in it, beside multi's.
	other := filepath.Join(filepath.Dir(c.Parent), "cg21-other-"+strings.ReplaceAll(t.Name(), "/", "-"))
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		os.Remove(other)
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		deadline := time.Now().Add(10 * time.Second)
		for os.Remove(other) != nil && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	})
	if err := os.WriteFile(filepath.Join(other, "cgroup.procs"), []byte(strings.TrimSpace(itoa(cmd.Process.Pid))), 0); err != nil {
		t.Fatal(err)
	}
	rundir := t.TempDir()
	err := Kill(other, rundir, filepath.Base(other))
	if !errors.Is(err, ErrNotMine) {
		t.Fatalf("Kill(%s) = %v; want ErrNotMine", other, err)
	}
	if err := Remove(other, rundir, filepath.Base(other)); !errors.Is(err, ErrNotMine) {
		t.Fatalf("Remove(%s) = %v; want ErrNotMine", other, err)
	}
	if cmd.ProcessState != nil || cmd.Process.Signal(syscallZero) != nil {
		t.Fatal("the other cgroup's process was killed")
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("the other cgroup was removed: %v", err)
	}
}

// Without a cgroup2 mount where MULTI_CGROUP_ROOT points, containment is
// session, and why says so.
func TestDetectFallback(t *testing.T) {
	t.Setenv(EnvRoot, t.TempDir())
	c := Detect(t.TempDir())
	if c.Mode != Session || !strings.Contains(c.Why, "not a cgroup2 mount") {
		t.Fatalf("Detect = %+v; want session, not a cgroup2 mount", c)
	}
	t.Setenv(EnvRoot, "")
	t.Setenv(EnvContainment, "session")
	if c := Detect(t.TempDir()); c.Mode != Session || c.Why != "MULTI_CONTAINMENT=session" {
		t.Fatalf("Detect = %+v; want session by MULTI_CONTAINMENT", c)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// sleepIn starts a sleep in the cgroup folder at path; end kills and
// reaps it, and runs at the test's end if the test did not.
func sleepIn(t *testing.T, path string) (end func()) {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	end = func() {
		once.Do(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
	}
	t.Cleanup(end)
	if err := os.WriteFile(filepath.Join(path, "cgroup.procs"), []byte(itoa(cmd.Process.Pid)), 0); err != nil {
		t.Fatal(err)
	}
	return end
}

var syscallZero = syscall.Signal(0)

// cgroupRundir is Detect for a new rundir, and the test skipped where
// multi can make no cgroup.
func cgroupRundir(t *testing.T) (string, Containment) {
	rundir := t.TempDir()
	c := Detect(rundir)
	if os.Geteuid() != 0 || c.Mode != Cgroup {
		t.Skipf("needs root and a cgroup v2 folder multi can make (%s)", c.Why)
	}
	t.Cleanup(func() { Sweep(rundir) })
	return rundir, c
}

// A folder a start has made and not yet filled is not removed by another
// command: not by a stop of the node removing its empty folder, not by a
// stop of another node removing the emptied rundir's folder, not by a
// sweep. Once the start lets go, an empty folder goes.
func TestRemoveLeavesAFolderBeingFilled(t *testing.T) {
	rundir, c := cgroupRundir(t)
	path, held, err := Make(c, "w1")
	if err != nil {
		t.Fatal(err)
	}
	if err := Remove(path, rundir, "w1"); err != nil {
		t.Fatalf("Remove of a held folder: %v", err)
	}
	RemoveParent(c.Parent)
	Sweep(rundir)
	if err := RemoveIdle(path); err == nil {
		t.Fatal("RemoveIdle removed a held folder")
	}
	if _, err := os.Stat(path); err != nil {
		held.Close()
		t.Fatalf("a folder a start was filling was removed: %v", err)
	}
	// The step's descriptor holds it too, until it has joined.
	step, err := Open(path)
	held.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := Remove(path, rundir, "w1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		step.Close()
		t.Fatalf("the folder the step holds was removed: %v", err)
	}
	step.Close()
	if err := Remove(path, rundir, "w1"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, c.Parent} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after the last Remove: %v; want it gone", p, err)
		}
	}
}

// A stop that removes the emptied rundir's folder between a start's look
// at it and its making of the node's folder in it does not fail the
// start: the start makes the folder again.
func TestMakeAfterTheParentWent(t *testing.T) {
	_, c := cgroupRundir(t)
	removed := 0
	makeNodeHook = func() {
		if removed == 0 {
			RemoveParent(c.Parent) // another command's stop, in between
			if _, err := os.Stat(c.Parent); errors.Is(err, os.ErrNotExist) {
				removed++
			}
		}
	}
	t.Cleanup(func() { makeNodeHook = nil })
	path, held, err := Make(c, "w1")
	if err != nil {
		t.Fatalf("Make with the parent removed under it: %v", err)
	}
	defer held.Close()
	if removed != 1 {
		t.Fatal("the hook did not remove the parent: the test tests nothing")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

// WaitEmpty wakes when the cgroup empties, told by inotify on its
// cgroup.events, not at its next poll: with polls an hour apart, it
// still returns once the last process is gone.
func TestWaitEmptyWakesOnEvents(t *testing.T) {
	rundir, c := cgroupRundir(t)
	path, held, err := Make(c, "w1")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	end := sleepIn(t, path)
	looked := make(chan struct{}, 1)
	pollFirst, pollCap, waitLooked = time.Hour, time.Hour, func() {
		select {
		case looked <- struct{}{}:
		default:
		}
	}
	first, most := pollFirst, pollCap
	t.Cleanup(func() { pollFirst, pollCap, waitLooked = first, most, nil })
	type result struct {
		empty bool
		err   error
	}
	res := make(chan result, 1)
	go func() {
		ok, err := WaitEmpty(path, rundir, "w1", time.Time{}, nil)
		res <- result{ok, err}
	}()
	<-looked // it saw the process, and now waits
	end()
	select {
	case r := <-res:
		if !r.empty || r.err != nil {
			t.Fatalf("WaitEmpty = %v, %v; want true", r.empty, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("WaitEmpty did not wake when the cgroup emptied (no inotify on cgroup.events)")
	}
}

// Two stops of one node at once: the one that opened a file of the node's
// folder reads it after the other removed the folder, which the kernel
// answers with ENODEV. That is a folder gone, not a failure (the races
// script's concurrent stopwaits failed "read cgroup.events: no such
// device").
func TestReadOfARemovedFolderIsGone(t *testing.T) {
	rundir, c := cgroupRundir(t)
	path, held, err := Make(c, "w1")
	if err != nil {
		t.Fatal(err)
	}
	held.Close()
	readInHook = func(string) {
		readInHook = nil
		if err := Remove(path, rundir, "w1"); err != nil {
			t.Error(err)
		}
	}
	defer func() { readInHook = nil }()
	if ok, err := WaitEmpty(path, rundir, "w1", time.Now().Add(time.Second), nil); !ok || err != nil {
		t.Errorf("WaitEmpty of a folder removed while it was read: %v, %v; want true, nil", ok, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s: %v; want it removed by the hook", path, err)
	}
}
