package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/multi"
)

// TestRunCgroupNamespace: multi run as PID 1 of a private cgroup and pid
// namespace, as in a container. A helper shell moves itself into a new
// cgroup C, then `unshare --cgroup --mount --pid --fork --mount-proc`
// makes C the root of a cgroup namespace, cgroup2 is mounted again
// inside (so that it shows C as its root) and multi run runs as PID 1
// with two nodes, one of which forks a setsid child that ignores TERM.
// Its cgroup is the namespace's root, so run moves itself into the leaf
// multi.run first and makes its nodes' cgroups beside it; at TERM it
// stops every tree, and leaves C empty, with no folder in it.
func TestRunCgroupNamespace(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root for cgroup and pid namespaces (CI runs as root)")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("needs unshare(1) from util-linux")
	}
	nsenter, err := exec.LookPath("nsenter")
	if err != nil {
		t.Skip("needs nsenter(1) from util-linux")
	}
	if out, err := exec.Command(unshare, "--cgroup", "--mount", "--pid", "--fork", "--mount-proc", "true").CombinedOutput(); err != nil {
		t.Skipf("cannot make cgroup and pid namespaces here: %v: %s", err, bytes.TrimSpace(out))
	}
	if !canCgroup() {
		t.Skip("no cgroup v2 folder multi can make here")
	}
	mount := cgroup2Mount(t)
	bin := binary(t)
	work := t.TempDir()
	mark := "cgns21-" + filepath.Base(filepath.Dir(work))
	c := filepath.Join(mount, mark)
	if err := os.Mkdir(c, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeCgroupTree(t, c) })

	write := func(name, text string) string {
		p := filepath.Join(work, name)
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("node.sh", `#!/bin/sh
# w1 forks a setsid child that ignores TERM; both nodes then exec sleep.
if [ "$1" = w1 ]; then
	setsid sh -c 'trap "" TERM; : > "$1"; sleep 1000; sleep 1000' "$MARK" "$WORK/gc.ready" &
fi
exec sleep 1000
`)
	inner := write("inner.sh", `#!/bin/sh
# PID 1 of the namespaces: cgroup2 mounted again shows C as its root.
# (the host's unmounted first, in this private mount namespace: mount(8)
# refuses a second cgroup2 on one folder)
umount -l "$CGMOUNT" && mount -t cgroup2 cgroup2 "$CGMOUNT" || exit 97
exec "$MULTI" run w1 w2 --pidfile="$WORK/%n.pid" --timeout=2s --ready-file="$WORK/ready" -- "$WORK/node.sh" %n
`)
	env := append(os.Environ(), "MULTI="+bin, "WORK="+work, "MARK="+mark, "CGMOUNT="+mount,
		"MULTI_RUNDIR="+filepath.Join(work, "run"), "GORACE=atexit_sleep_ms=0")
	log, err := os.Create(filepath.Join(work, "run.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	// The shell joins C, then becomes unshare; --kill-child: should the
	// test kill unshare, the namespace's PID 1 goes with it, and the
	// kernel kills the rest of the namespace.
	helper := exec.Command("sh", "-c", `echo $$ > "$1/cgroup.procs" && exec "$2" --cgroup --mount --pid --fork --mount-proc --kill-child "$3"`,
		"sh", c, unshare, inner)
	helper.Env, helper.Stdout, helper.Stderr = env, log, log
	helper.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var exitErr error
	go func() { exitErr = helper.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			syscall.Kill(-helper.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	runLog := func() string { b, _ := os.ReadFile(log.Name()); return string(b) }
	waitFile := func(p string) {
		t.Helper()
		deadline := time.Now().Add(testutil.PollTimeout)
		for {
			if _, err := os.Stat(p); err == nil {
				return
			}
			select {
			case <-exited:
				t.Fatalf("the run ended (%v) before %s appeared:\n%s", exitErr, p, runLog())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s did not appear:\n%s", p, runLog())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitFile(filepath.Join(work, "ready"))
	waitFile(filepath.Join(work, "gc.ready"))
	// unshare itself, outside the namespaces, goes back to this test's
	// cgroup, as a container runtime leaves its container's: C is then
	// the container's alone.
	if err := os.WriteFile(filepath.Join(mount, selfCgroup(t), "cgroup.procs"), []byte(strconv.Itoa(helper.Process.Pid)), 0); err != nil {
		t.Fatal(err)
	}

	// run moved into its leaf: C/multi.run holds it, and only it.
	leaf := filepath.Join(c, cgroup.RunLeaf)
	procs := cgroupProcs(t, leaf)
	if len(procs) != 1 || comm(procs[0]) != "multi" {
		t.Fatalf("%s holds %v; want the run alone:\n%s", leaf, procs, runLog())
	}
	run := procs[0]
	if !strings.Contains(runLog(), "moved into cgroup /") {
		t.Errorf("run's log does not say it moved into its leaf:\n%s", runLog())
	}
	if n := cgroupProcs(t, c); len(n) != 0 {
		t.Errorf("C itself holds %v; want nothing (an internal process)", n)
	}
	// Each node in a cgroup of its own, beside the leaf: status --json,
	// inside the namespaces, says cgroup; seen from here, under C.
	parent := filepath.Join(c, cgroup.ParentName(filepath.Join(work, "run")))
	// w1's setsid child forks its sleep after it touches gc.ready: the
	// count is waited for, up to the deadline.
	for name, least := range map[string]int{"w1": 3, "w2": 1} {
		deadline := time.Now().Add(testutil.PollTimeout)
		p := cgroupProcs(t, filepath.Join(parent, name))
		for len(p) < least && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
			p = cgroupProcs(t, filepath.Join(parent, name))
		}
		if len(p) < least {
			t.Errorf("%s's cgroup holds %v; want at least %d processes", name, p, least)
		}
	}
	st := exec.Command(nsenter, "-t", strconv.Itoa(run), "-m", "-p", "-C", "--", bin, "status", "w1", "w2",
		"--pidfile="+filepath.Join(work, "%n.pid"), "--json")
	st.Env = env
	out, err := st.Output()
	if err != nil {
		t.Fatalf("status --json in the namespaces: %v\n%s", err, out)
	}
	var status []multi.Status
	if err := json.Unmarshal(out, &status); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if len(status) != 2 {
		t.Fatalf("status --json: %s; want 2 nodes", out)
	}
	for _, s := range status {
		if want := len(cgroupProcs(t, filepath.Join(parent, s.Node.Name))); s.Tree.Containment != multi.InCgroup || s.Tree.Procs != want {
			t.Errorf("status of %q: containment %q, %d processes; want cgroup, %d\n%s", s.Node.Name, s.Tree.Containment, s.Tree.Procs, want, out)
		}
	}
	if got := marked(mark); len(got) != 1 {
		t.Errorf("%d processes marked %s (%v); want the setsid child", len(got), mark, got)
	}

	// TERM to the run: every tree stopped, the TERM-ignoring child killed
	// after --timeout, every folder it made removed, C left empty.
	if err := syscall.Kill(run, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		if exitErr != nil {
			t.Errorf("run: %v\n%s", exitErr, runLog())
		}
	case <-time.After(testutil.PollTimeout):
		t.Fatalf("the run did not end within %s of TERM:\n%s", testutil.PollTimeout, runLog())
	}
	if got := marked(mark); len(got) != 0 {
		t.Errorf("after the run: processes marked %s left: %v", mark, got)
	}
	ents, err := os.ReadDir(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			t.Errorf("after the run: %s left in C (run removes what it made once empty):\n%s", e.Name(), runLog())
		}
	}
	if ev, _ := os.ReadFile(filepath.Join(c, "cgroup.events")); !bytes.Contains(ev, []byte("populated 0")) {
		t.Errorf("after the run: C is populated: %s", ev)
	}
	if err := os.Remove(c); err != nil {
		t.Errorf("removing C after the run: %v", err)
	}
	t.Logf("%s", runLog())
}

// cgroup2Mount is where cgroup2 is mounted, from /proc/self/mountinfo.
func cgroup2Mount(t *testing.T) string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(l, " - ")
		if f := strings.Fields(pre); ok && strings.HasPrefix(post, "cgroup2 ") && len(f) >= 5 {
			return f[4]
		}
	}
	t.Skip("no cgroup2 mounted")
	return ""
}

// selfCgroup is this process's cgroup v2 path, from /proc/self/cgroup.
func selfCgroup(t *testing.T) string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			return p
		}
	}
	t.Fatal("no 0:: line in /proc/self/cgroup")
	return ""
}

// cgroupProcs returns the pids in the cgroup folder dir (none if it is
// gone).
func cgroupProcs(t *testing.T, dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// comm is pid's command name.
func comm(pid int) string {
	if p, err := proc.Read(pid); err == nil {
		return p.Comm
	}
	return fmt.Sprint("pid ", pid, " gone")
}

// removeCgroupTree kills whatever is left in the cgroup folder c and
// under it (cgroup.kill), waits until it is empty, and removes its
// folders, deepest first.
func removeCgroupTree(t *testing.T, c string) {
	if _, err := os.Stat(c); err != nil {
		return
	}
	os.WriteFile(filepath.Join(c, "cgroup.kill"), []byte("1"), 0)
	deadline := time.Now().Add(testutil.PollTimeout)
	for {
		ev, err := os.ReadFile(filepath.Join(c, "cgroup.events"))
		if err != nil || bytes.Contains(ev, []byte("populated 0")) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("%s still populated after cgroup.kill: %s", c, ev)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	var dirs []string
	filepath.WalkDir(c, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	// (a cgroup emptied a moment ago may refuse rmdir for a moment: EBUSY)
	for i := len(dirs) - 1; i >= 0; i-- {
		for err := os.Remove(dirs[i]); err != nil && !os.IsNotExist(err); err = os.Remove(dirs[i]) {
			if time.Now().After(deadline) {
				t.Errorf("removing %s: %v", dirs[i], err)
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
