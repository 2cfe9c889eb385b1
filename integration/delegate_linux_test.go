package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/internal/testutil"
)

// A subtree chowned to a user (what systemd's Delegate=yes does) gives
// that user's nodes cgroups under it and nowhere else; outside it the
// same user's nodes are contained by their session, and multi check says
// why.
func TestCgroupDelegated(t *testing.T) {
	t.Parallel()
	testutil.NeedRoot(t)
	if !canCgroup() {
		t.Skip("no cgroup v2 folder multi can make here")
	}
	bin := binary(t)
	// Everything the user runs or writes, reachable by it.
	top, err := os.MkdirTemp("", "cgdeleg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	os.Chmod(top, 0o755)
	exe := filepath.Join(top, "multi")
	copyFile(t, bin, exe)
	run := filepath.Join(top, "run")
	if err := os.Mkdir(run, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chown(run, testutil.Nobody, testutil.Nobody)

	// The delegated subtree: beside multi's own folders, the user's.
	parent := filepath.Dir(cgroup.Detect(top).Parent)
	deleg := filepath.Join(parent, "cg21-deleg-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(deleg, 0o755); err != nil {
		t.Fatal(err)
	}
	cgroup.RemoveParent(cgroup.Detect(top).Parent)
	t.Cleanup(func() { removeTree(t, deleg) })
	for _, f := range []string{"", "cgroup.procs", "cgroup.threads", "cgroup.subtree_control"} {
		if err := os.Chown(filepath.Join(deleg, f), testutil.Nobody, testutil.Nobody); err != nil {
			t.Fatal(err)
		}
	}
	dfd, err := os.Open(deleg)
	if err != nil {
		t.Fatal(err)
	}
	defer dfd.Close()

	// as runs multi as the user, born in the delegated subtree (in) or
	// in this process's cgroup.
	as := func(in bool, args ...string) (string, int) {
		cmd := exec.Command(exe, args...)
		// A working folder of its own: the test's may be one the user
		// cannot reach (a checkout in a 0700 folder).
		cmd.Dir = run
		cmd.Env = []string{"PATH=/usr/bin:/bin", "MULTI_RUNDIR=" + run}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: testutil.Nobody, Gid: testutil.Nobody}}
		if in {
			cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, int(dfd.Fd())
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if errors.Is(err, syscall.ENOSYS) {
			// qemu-user has no clone3, which a start in a given cgroup
			// (UseCgroupFD) needs.
			t.Skip("no clone3 here (qemu-user?):", err)
		}
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), code
	}

	out, _ := as(false, "check")
	if !strings.Contains(out, "containment: session") || !strings.Contains(out, "cannot make a cgroup") {
		t.Errorf("multi check as the user outside its subtree:\n%s", out)
	}
	out, _ = as(true, "check")
	if !strings.Contains(out, "containment: cgroup") || !strings.Contains(out, deleg+"/multi.") {
		t.Errorf("multi check as the user in its subtree:\n%s", out)
	}

	out, code := as(true, "start", "w1", "--", "sleep", "300")
	t.Cleanup(func() {
		// Whatever is left of the user's nodes: by their cgroups.
		filepath.WalkDir(deleg, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() && p != deleg {
				os.WriteFile(filepath.Join(p, "cgroup.kill"), []byte("1"), 0)
			}
			return nil
		})
	})
	if code != 0 {
		t.Fatalf("start as the user in its subtree: exit %d\n%s", code, out)
	}
	// The record as the user wrote it (root reads none in a folder of
	// another user's).
	var n struct{ Cgroup string }
	b, err := os.ReadFile(filepath.Join(run, "w1.node"))
	if err != nil || json.Unmarshal(b, &n) != nil {
		t.Fatalf("record: %v %s", err, b)
	}
	if !strings.HasPrefix(n.Cgroup, deleg+"/multi.") {
		t.Fatalf("the user's node is in cgroup %q; want one under %s", n.Cgroup, deleg)
	}
	// Its pid from the pidfile's text: root takes no lock's word in a
	// folder of another user's, and the test only asks where it runs.
	pb, _ := os.ReadFile(filepath.Join(run, "w1.pid"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(pb)))
	b, _ = os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if rel := strings.TrimPrefix(n.Cgroup, mountOf(t)); !strings.Contains(string(b), "0::"+rel+"\n") {
		t.Fatalf("the node (pid %d) is in %q; want %s", pid, b, rel)
	}
	out, code = as(true, "stopwait", "w1")
	if code != 0 || !strings.Contains(out, "w1: stopped") {
		t.Fatalf("stopwait as the user: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(n.Cgroup); !os.IsNotExist(err) {
		t.Fatalf("the node's cgroup %s is left after stopwait: %v", n.Cgroup, err)
	}
}

// mountOf is the cgroup2 mount point, as mountinfo has it.
func mountOf(t *testing.T) string {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	for _, l := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(l, " - ")
		if f := strings.Fields(pre); ok && strings.HasPrefix(post, "cgroup2 ") && len(f) >= 5 {
			return f[4]
		}
	}
	t.Fatal("no cgroup2 mount")
	return ""
}

// removeTree removes the folders of a cgroup subtree, deepest first, once
// empty (a node's last process may still be exiting).
func removeTree(t *testing.T, dir string) {
	var dirs []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		deadline := time.Now().Add(10 * time.Second)
		for os.Remove(dirs[i]) != nil && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
}
