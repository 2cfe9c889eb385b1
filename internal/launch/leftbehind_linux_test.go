package launch

import (
	"context"
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
)

// A start that failed cleans up what its child left in the node's cgroup;
// but when another start's node holds the node's lock by now, in the same
// folder (two restarts of one node at once), only what the child's own
// session left is its: the node that runs is not killed.
func TestLeftBehindSparesTheNodeThatRunsNow(t *testing.T) {
	testutil.NeedRoot(t)
	n := forkTestNode(t, "w1", "sleep", "300")
	cg := cgroup.Detect(filepath.Dir(n.PidFile))
	if cg.Mode != cgroup.Cgroup {
		t.Skipf("no cgroup here: %s", cg.Why)
	}
	path, held, err := cgroup.Make(cg, n.Name)
	if err != nil {
		t.Fatal(err)
	}
	held.Close()
	n.Cgroup = path
	t.Cleanup(func() { // last: once what the others kill has left it
		cgroup.WaitEmpty(path, filepath.Dir(n.PidFile), n.Name, time.Now().Add(testutil.PollTimeout), nil)
		if err := cgroup.Remove(path, filepath.Dir(n.PidFile), n.Name); err != nil {
			t.Errorf("the node's cgroup folder: %v", err)
		}
	})

	// The failed start's child: it left a process in its session, in the
	// node's cgroup, and exited.
	kid := filepath.Join(t.TempDir(), "kid")
	since := proc.NowTicks()
	// It joins the folder before it forks (cgroup.procs: qemu-user has no
	// clone3), then forks once its input ends.
	old := exec.Command("sh", "-c", "read x; sleep 300 & echo $! > "+kid)
	old.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	in, err := old.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Start(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "cgroup.procs"), []byte(strconv.Itoa(old.Process.Pid)), 0); err != nil {
		old.Process.Kill()
		old.Wait()
		t.Fatal(err)
	}
	in.Close()
	if err := old.Wait(); err != nil {
		t.Fatal(err)
	}
	left := testutil.ReadPID(t, kid)
	testutil.KillAtCleanup(t, left) // this process or none
	// $! is the forked subshell, which execs sleep a moment later:
	// leftBehind names it by what it is then.
	var seen proc.Stat
	testutil.PollUntil(t, "the child's leftover to be sleep", func() bool {
		p, err := proc.Read(left)
		seen = p
		return err != nil || p.Gone() || p.Comm == "sleep"
	})
	if seen.Comm != "sleep" || seen.Gone() {
		t.Fatalf("the child's leftover pid %d: %+v, not a running sleep", left, seen)
	}

	// The node another start started meanwhile, in the same folder.
	now, err := Spawn(context.Background(), nil, n, os.Environ(), 0)
	if err != nil {
		t.Fatal(err)
	}
	killNode(t, now)

	ch := &Child{node: n, pid: old.Process.Pid, bornTicks: since}
	said := ch.leftBehind()
	if waitable(now.pid) || syscall.Kill(now.pid, 0) != nil {
		t.Fatalf("the node that holds the lock now (pid %d) was killed: %q", now.pid, said)
	}
	if !strings.Contains(said, "killed what it left of its session") || !strings.Contains(said, "pid "+strconv.Itoa(left)+" (sleep)") {
		t.Errorf("leftBehind: %q; want the child's leftover pid %d named and killed", said, left)
	}
	testutil.PollUntil(t, "the child's leftover to be killed", func() bool {
		p, err := proc.Read(left)
		return err != nil || p.Gone()
	})
}
