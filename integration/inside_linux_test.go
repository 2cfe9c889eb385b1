package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/internal/testutil"
)

// insideNode runs multi with args in the cgroup of node name (as a deploy
// task, or a node that restarts its siblings, runs there): a shell joins
// the cgroup, then execs multi. It returns multi's exit code and output.
func insideNode(t *testing.T, rundir, cg string, args ...string) (int, string) {
	t.Helper()
	script := `echo $$ > "$0/cgroup.procs" && exec "$@"`
	// A deadline: a verb that waits for its own exit would never end.
	ctx, cancel := context.WithTimeout(context.Background(), testutil.PollTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", append([]string{"-c", script, cg, binary(t)}, args...)...)
	cmd.Env = append(os.Environ(), "MULTI_RUNDIR="+rundir, "GORACE=atexit_sleep_ms=0")
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	t.Logf("multi %s (from inside %s): exit %d\n%s", strings.Join(args, " "), cg, code, out)
	return code, string(out)
}

// A verb run from inside a node's own cgroup never counts, waits for or
// kills multi itself: status does not call the node lingering because of
// it, stopwait ends (rather than waiting for multi's own exit), and
// restart brings the node back up. multi says it stays in the cgroup.
func TestVerbFromInsideTheNode(t *testing.T) {
	testutil.NeedRoot(t)
	if !canCgroup() {
		t.Skip("no cgroup per node here")
	}
	t.Parallel()
	rundir := t.TempDir()
	t.Cleanup(func() { killCgroups(rundir) })
	if code, _, _ := runMulti(t, rundir, nil, "start", "w1", "--", "sleep", "300"); code != 0 {
		t.Fatalf("start: exit %d", code)
	}
	n, err := record.Read(rundir, "w1")
	if err != nil || n.Cgroup == "" {
		t.Fatalf("w1's record: %+v, %v; want its cgroup", n, err)
	}
	code, out := insideNode(t, rundir, n.Cgroup, "status", "w1")
	if code != 0 || !strings.HasPrefix(out, "w1: running") {
		t.Errorf("status from inside: exit %d, %q; want running", code, out)
	}
	code, out = insideNode(t, rundir, n.Cgroup, "restart", "w1")
	if code != 0 || !strings.Contains(out, "w1: restarted") {
		t.Errorf("restart from inside: exit %d, %q; want w1 restarted", code, out)
	}
	// In its own folder again, not in one under it: no node's tree holds
	// another's.
	if again, err := record.Read(rundir, "w1"); err != nil || again.Cgroup != n.Cgroup {
		t.Errorf("w1's cgroup after a restart from inside: %q, %v; want %s", again.Cgroup, err, n.Cgroup)
	}
	code, out = insideNode(t, rundir, n.Cgroup, "stopwait", "w1")
	if code != 0 || !strings.Contains(out, "w1: stopped") || !strings.Contains(out, "this multi runs in it") {
		t.Errorf("stopwait from inside: exit %d, %q; want w1 stopped, its cgroup left for this multi, saying so", code, out)
	}
}

// A node that makes a cgroup of its own under its node's folder (a
// container runtime, a systemd-run --scope) is counted whole, stopped
// whole, and its folders removed, the node's own too.
func TestNodeWithCgroupsOfItsOwn(t *testing.T) {
	testutil.NeedRoot(t)
	if !canCgroup() {
		t.Skip("no cgroup per node here")
	}
	t.Parallel()
	rundir := t.TempDir()
	t.Cleanup(func() { killCgroups(rundir) })
	if code, _, _ := runMulti(t, rundir, nil, "start", "w1", "--", "sleep", "300"); code != 0 {
		t.Fatalf("start: exit %d", code)
	}
	n, err := record.Read(rundir, "w1")
	if err != nil || n.Cgroup == "" {
		t.Fatalf("w1's record: %+v, %v; want its cgroup", n, err)
	}
	// A process of the node's tree, in a folder under the node's.
	sub := filepath.Join(n.Cgroup, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	kid := exec.Command("sh", "-c", `echo $$ > "$0/cgroup.procs" && exec sleep 300`, sub)
	if err := kid.Start(); err != nil {
		t.Fatal(err)
	}
	go kid.Wait()
	t.Cleanup(func() { kid.Process.Kill() })
	testutil.PollUntil(t, "the child to be in the sub-folder", func() bool {
		b, _ := os.ReadFile(filepath.Join(sub, "cgroup.procs"))
		return strings.TrimSpace(string(b)) == strconv.Itoa(kid.Process.Pid)
	})
	code, out, _ := runMulti(t, rundir, nil, "status", "w1", "--json")
	if code != 0 || !strings.Contains(out, `"procs": 2`) {
		t.Errorf("status: exit %d, %s; want 2 processes in w1's tree", code, out)
	}
	code, out, errs := runMulti(t, rundir, nil, "stopwait", "w1", "--timeout=1s")
	if code != 0 || !strings.Contains(out, "w1: ") || strings.Contains(out+errs, "not removed") {
		t.Errorf("stopwait: exit %d, %q, %q; want the tree stopped and its folders removed", code, out, errs)
	}
	for _, d := range []string{sub, n.Cgroup} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s after stopwait: %v; want it removed", d, err)
		}
	}
}

// Nothing is left in the cgroup hierarchy: not the rundir's folder after
// a start that started nothing, nor a node's folder after it exited on
// its own under run.
func TestNoCgroupLeft(t *testing.T) {
	testutil.NeedRoot(t)
	if !canCgroup() {
		t.Skip("no cgroup per node here")
	}
	t.Parallel()
	rundir := t.TempDir()
	t.Cleanup(func() { killCgroups(rundir) })
	parent := cgroup.Detect(rundir).Parent // made, to learn it
	cgroup.RemoveParent(parent)
	// w0 runs without a cgroup; a start of it finds it running.
	if code, _, _ := runMulti(t, rundir, []string{"MULTI_CONTAINMENT=session"}, "start", "w0", "--", "sleep", "300"); code != 0 {
		t.Fatalf("start: exit %d", code)
	}
	t.Cleanup(func() { runMulti(t, rundir, nil, "kill", "w0") })
	if code, out, _ := runMulti(t, rundir, nil, "start", "w0", "--", "sleep", "300"); code != 0 || !strings.Contains(out, "already running") {
		t.Fatalf("start of w0 running: exit %d, %q", code, out)
	}
	if _, err := os.Stat(parent); !os.IsNotExist(err) {
		t.Errorf("the rundir's cgroup folder %s after a start that started nothing: %v; want it gone", parent, err)
	}

	// Under run, w1 exits on its own and is left down (--on-exit=ignore).
	// Before it exits it writes its cgroup (/proc/self/cgroup) to mark.
	mark := filepath.Join(rundir, "w1.cgroup")
	run := exec.Command(binary(t), "run", "w1", "w2", "--on-exit=ignore", "--", "sh", "-c",
		`[ "$0" = w2 ] && exec sleep 300; cat /proc/self/cgroup > "$1.tmp" && mv "$1.tmp" "$1"; exit 3`, "%n", mark)
	run.Env = append(os.Environ(), "MULTI_RUNDIR="+rundir, "GORACE=atexit_sleep_ms=0")
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- run.Wait() }()
	t.Cleanup(func() { run.Process.Kill() })
	w1 := filepath.Join(parent, "w1")
	testutil.PollUntil(t, "w1 to have run and exited", func() bool {
		if _, err := os.Stat(mark); err != nil {
			return false
		}
		_, out, _ := runMultiQuiet(t, rundir, "status", "w1")
		return !strings.Contains(out, "running")
	})
	b, _ := os.ReadFile(mark)
	if !regexp.MustCompile(`(?m)^0::.*/` + regexp.QuoteMeta(filepath.Base(parent)) + `/w1$`).Match(b) {
		t.Fatalf("w1 ran in the cgroup %q; want its folder %s", b, w1)
	}
	testutil.PollUntil(t, "w1's cgroup folder "+w1+" to be removed", func() bool {
		_, err := os.Stat(w1)
		return os.IsNotExist(err)
	})
	run.Process.Signal(syscall.SIGTERM)
	<-exited
}

// runMultiQuiet is runMulti that logs nothing: for a poll.
func runMultiQuiet(t *testing.T, rundir string, args ...string) (int, string, error) {
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(os.Environ(), "MULTI_RUNDIR="+rundir, "GORACE=atexit_sleep_ms=0")
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code, err = ee.ExitCode(), nil
	}
	return code, string(out), err
}
