package multi

import (
	"context"
	"io"
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
	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/internal/testhooks"
	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/nodes"
)

// sessionOf starts sh -c script args in a session of its own (not a node),
// with its stdin a pipe it may read from, and returns it; the test's
// cleanup kills its session's members by pid.
func sessionOf(t *testing.T, script string, args ...string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", script}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sid := cmd.Process.Pid
	t.Cleanup(func() {
		in.Close()
		if ms, err := proc.SessionMembers(sid); err == nil {
			for _, m := range ms {
				if m.PID > 1 {
					syscall.Kill(m.PID, syscall.SIGKILL)
				}
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, in
}

// members waits until session sid has n live members other than its
// leader, and returns them.
func members(t *testing.T, sid, n int) []proc.Stat {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ms, err := proc.SessionMembers(sid)
		if err != nil {
			t.Fatal(err)
		}
		var out []proc.Stat
		for _, m := range ms {
			if m.PID != sid {
				out = append(out, m)
			}
		}
		if len(out) == n {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %d: %v; want %d members beside its leader", sid, ms, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// forged is a Cluster of one node, w1, whose record names st: the node is not
// running (nobody holds its pidfile), and its tree is its session.
func forged(t *testing.T, st nodes.Started) *Cluster {
	t.Helper()
	dir := t.TempDir()
	ns, err := nodes.Spec{Names: []string{"w1"}, RunDir: dir, Command: []string{"sleep", "300"}}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	if err := record.WriteStarted(dir, ns[0], st); err != nil {
		t.Fatal(err)
	}
	return &Cluster{Nodes: ns, RunDir: dir, Detach: true}
}

// alive reports whether p still runs (a zombie does not) as the process
// it was, with no SIGKILL on its way: one sent a moment ago is pending, or
// the process is exiting, until it is a zombie.
func alive(p proc.Stat) bool {
	q, err := proc.Read(p.PID)
	if err != nil || q.Gone() || q.Exiting() || q.StartTicks != p.StartTicks {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		if k != "SigPnd" && k != "ShdPnd" {
			continue
		}
		if mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err != nil || mask&(1<<(syscall.SIGKILL-1)) != 0 {
			return false
		}
	}
	return true
}

// TestSessionStranger: a node's tree without a cgroup is its session, by
// id, and a session id is a pid number that can name another session
// once the node's is gone. A record whose pid is the id of an unrelated
// session is never counted nor signalled: not while that pid names
// another process than the one recorded (another start time), and not,
// with the leader gone, for members that started before the recorded
// process did.
func TestSessionStranger(t *testing.T) {
	if _, err := proc.ReadAll(); err != nil {
		t.Skip("no /proc:", err)
	}
	ctx := context.Background()
	check := func(t *testing.T, c *Cluster, stranger []proc.Stat) {
		t.Helper()
		sts, err := c.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if tr := sts[0].Tree; tr.Containment != cgroup.Session || tr.Procs != 0 || tr.Lingering {
			t.Errorf("status counts a stranger's session: %+v", tr)
		}
		for _, op := range []func(context.Context, StopOptions) ([]Result, error){c.StopWait, c.Kill, c.Stop} {
			rs, err := op(ctx, StopOptions{Timeout: time.Second})
			if err != nil || rs[0].Lingering != 0 {
				t.Errorf("%+v, %v; want nothing done", rs[0], err)
			}
		}
		if _, _, err := c.call(StopOptions{}.plan()).startCgroup(cgroup.Containment{Mode: cgroup.Session}, c.Nodes[0], true, c.Nodes[0], false); err != nil {
			t.Errorf("start refused beside a stranger's session: %v", err)
		}
		for _, p := range stranger {
			if !alive(p) {
				t.Fatalf("pid %d of the stranger's session was signalled", p.PID)
			}
		}
	}

	t.Run("another leader", func(t *testing.T) {
		// The recorded pid is a live session leader with another start
		// time: a process that reused the number and made a session.
		cmd, _ := sessionOf(t, "sleep 300 & wait")
		sid := cmd.Process.Pid
		ms := members(t, sid, 1)
		leader, err := proc.Read(sid)
		if err != nil {
			t.Fatal(err)
		}
		st := nodes.Started{PID: sid, StartTicks: leader.StartTicks - 1}
		check(t, forged(t, st), ms)
		// The same record with the leader's own start time: counted.
		st.StartTicks = leader.StartTicks
		sts, _ := forged(t, st).Status(ctx)
		if sts[0].Tree.Procs != 2 {
			t.Fatalf("the node's own session: %+v; want 2 processes", sts[0].Tree)
		}
	})

	t.Run("leader gone", func(t *testing.T) {
		// The leader has exited (and been reaped): its member keeps the
		// session id. A record naming a process that started after the
		// member is not that member's node.
		cmd, in := sessionOf(t, "sleep 300 & read x; exit 0")
		sid := cmd.Process.Pid
		leader, err := proc.Read(sid)
		if err != nil {
			t.Fatal(err)
		}
		ms := members(t, sid, 1)
		in.Close()
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
		st := nodes.Started{PID: sid, StartTicks: ms[0].StartTicks + 1}
		check(t, forged(t, st), ms)
		// With the leader's start time: lingering, and stopwait kills it.
		st.StartTicks = leader.StartTicks
		c := forged(t, st)
		sts, _ := c.Status(ctx)
		if tr := sts[0].Tree; tr.Procs != 1 || !tr.Lingering {
			t.Fatalf("the node's own session: %+v; want 1 process lingering", tr)
		}
		rs, err := c.StopWait(ctx, StopOptions{})
		if err != nil || rs[0].Lingering != 1 || alive(ms[0]) {
			t.Fatalf("stopwait of the node's own session: %+v, %v; want its member killed", rs[0], err)
		}
	})
}

// TestSessionMemberCheckedAfterPin: a member of a node's session found in
// /proc is pinned with a pidfd and read again before it is signalled; one
// that left the session in between (its own setsid) is not signalled.
func TestSessionMemberCheckedAfterPin(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	dir := t.TempDir()
	ready, left := filepath.Join(dir, "ready"), filepath.Join(dir, "left")
	// The member leaves the session on SIGUSR1, and says so.
	member := `import os, signal, sys, time
def leave(*_):
    os.setsid()
    open(sys.argv[2], "w").close()
signal.signal(signal.SIGUSR1, leave)
open(sys.argv[1], "w").close()
while True:
    time.sleep(1)
`
	cmd, in := sessionOf(t, `python3 -c "$0" "$1" "$2" & read x; exit 0`, member, ready, left)
	sid := cmd.Process.Pid
	leader, err := proc.Read(sid)
	if err != nil {
		t.Fatal(err)
	}
	testutil.PollUntil(t, "the member ready", func() bool { _, err := os.Stat(ready); return err == nil })
	ms := members(t, sid, 1)
	t.Cleanup(func() { syscall.Kill(ms[0].PID, syscall.SIGKILL) })
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	// The node's own session, its leader gone: the member lingers.
	c := forged(t, nodes.Started{PID: sid, StartTicks: leader.StartTicks})
	testhooks.BeforePin = func(pid int) {
		if pid != ms[0].PID {
			return
		}
		syscall.Kill(pid, syscall.SIGUSR1)
		testutil.PollUntil(t, "the member out of the session", func() bool { _, err := os.Stat(left); return err == nil })
	}
	defer func() { testhooks.BeforePin = nil }()
	rs, err := c.StopWait(context.Background(), StopOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !alive(ms[0]) {
		t.Fatalf("pid %d, out of the node's session when pinned, was signalled (%+v)", ms[0].PID, rs[0])
	}
	if p, err := proc.Read(ms[0].PID); err != nil || p.Session != ms[0].PID {
		t.Fatalf("the member did not leave the session: %+v, %v", p, err)
	}
}
