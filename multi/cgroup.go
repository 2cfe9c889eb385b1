package multi

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// A LingeringError refuses to start a node whose last tree is left.
type LingeringError struct {
	Cgroup  string // the cgroup they are in, or
	Session int    // the session, without one
	Procs   []int
}

func (e *LingeringError) Error() string {
	where := "its cgroup " + e.Cgroup
	if e.Cgroup == "" {
		where = fmt.Sprintf("its session %d", e.Session)
	}
	return fmt.Sprintf("lingering: its lock is free, but %s left in %s (%s); refusing to start a second tree beside them (stopwait cleans them, or start --clean)",
		countProcs(len(e.Procs), " are", " is"), where, describePids(e.Procs))
}

// Is makes errors.Is(err, ErrLingering) true.
func (e *LingeringError) Is(target error) bool { return target == ErrLingering }

// countProcs is "1 process" or "N processes", with one or many after.
func countProcs(n int, many, one string) string {
	if n == 1 {
		return "1 process" + one
	}
	return strconv.Itoa(n) + " processes" + many
}

// describePids names each pid with its command, as /proc has it.
func describePids(pids []int) string {
	var names []string
	for _, pid := range pids {
		if p, err := proc.Read(pid); err == nil && p.Comm != "" {
			names = append(names, fmt.Sprintf("pid %d (%s)", pid, p.Comm))
		} else {
			names = append(names, fmt.Sprintf("pid %d", pid))
		}
	}
	return strings.Join(names, ", ")
}

// cleanWait bounds how long a clean waits for a killed tree to be gone.
const cleanWait = 10 * time.Second

// lingering returns the processes left in n's recorded cgroup, or without
// one in its session: none when it has none.
func (c *call) lingering(n nodes.Node) (cgroup.Tree, error) {
	return c.lingeringSince(n, time.Now())
}

// lingeringSince is lingering, where a node's session is seen by a look at
// /proc begun no earlier than since.
func (c *call) lingeringSince(n nodes.Node, since time.Time) (cgroup.Tree, error) {
	if n.Cgroup == "" {
		if inSession(n) {
			return c.sessionTree(n, since)
		}
		return cgroup.Tree{}, nil
	}
	t, err := cgroup.Read(n.Cgroup, c.rundir(), n.Name)
	if errors.Is(err, fs.ErrNotExist) {
		return cgroup.Tree{}, nil
	}
	return t, err
}

// cleanCgroup kills whatever is left in n's recorded cgroup (or session),
// waits until it is empty, and removes it. It returns the pids it killed.
func (c *call) cleanCgroup(n nodes.Node) ([]int, error) {
	if inSession(n) {
		return c.cleanSession(n)
	}
	t, err := c.lingering(n)
	if err != nil || n.Cgroup == "" {
		return nil, err
	}
	if t.Populated {
		if err := cgroup.Kill(n.Cgroup, c.rundir(), n.Name); err != nil {
			return nil, err
		}
		ok, err := cgroup.WaitEmpty(n.Cgroup, c.rundir(), n.Name, time.Now().Add(cleanWait), nil)
		if err != nil {
			return t.Procs, err
		}
		if !ok {
			return t.Procs, fmt.Errorf("cgroup %s: not empty %s after cgroup.kill", n.Cgroup, cleanWait)
		}
	}
	return t.Procs, cgroup.Remove(n.Cgroup, c.rundir(), n.Name)
}

// startCgroup readies n's cgroup before its start: the tree of its last
// run, if any is left, refused (a [LingeringError]) or with clean killed;
// then the folder under cg made, whose path it returns ("" under
// Session), with the folder held: the caller closes it once the node's
// exec step holds it (after Spawn), so that no other command removes it
// meanwhile.
func (c *call) startCgroup(cg cgroup.Containment, prev nodes.Node, hasPrev bool, n nodes.Node, clean bool) (string, *os.File, error) {
	if hasPrev && (prev.Cgroup != "" || inSession(prev)) {
		// A session seen as procsAfter sees it: the holder of a node
		// down is gone already.
		t, err := c.lingeringSince(prev, time.Time{})
		if err != nil {
			return "", nil, err
		}
		if t.Populated && !clean {
			return "", nil, &LingeringError{Cgroup: prev.Cgroup, Session: c.recordedProcess(prev).PID, Procs: t.Procs}
		}
		if t.Populated || prev.Cgroup != "" && prev.Cgroup != cg.NodePath(n.Name) {
			// A folder this multi runs in (a restart from inside the
			// node) stays, and the node starts in it again.
			if _, err := c.cleanCgroup(prev); err != nil && !errors.Is(err, cgroup.ErrSpared) {
				return "", nil, err
			}
		}
	}
	settings := cgroupSettings(n)
	if cg.Mode != cgroup.Cgroup {
		if len(settings) > 0 {
			// Refused before anything started (checkLimits); a
			// library caller's node given a cgroup limit as it starts.
			return "", nil, fmt.Errorf("%w: %s: %w", ErrLimitUnavailable, settings[0].Flag, cg.Available(settings[0].Controller))
		}
		return "", nil, nil
	}
	path, held, err := cgroup.Make(cg, n.Name)
	if err != nil || len(settings) == 0 {
		return path, held, err
	}
	// The node's limits, in its folder before its process joins it.
	if err := cgroup.SetLimits(held, settings); err != nil {
		held.Close()
		cgroup.Remove(path, c.rundir(), n.Name)
		return "", nil, err
	}
	return path, held, nil
}

// treeGone waits, after r's lock holder is gone, until nothing is left in
// its cgroup: until expired closes (the stop's timeout) with mixed and
// control-group, then cgroup.kill and the wait again; with kill (sig
// SIGKILL) at once. A ctx that ends first leaves the tree as it is.
// Then it removes the cgroup. Without a cgroup, the tree is the node's
// session, each member SIGKILLed after the timeout. Under KillMode
// process there is nothing to do. since is a time r's lock holder was gone
// by: a look at /proc begun then sees all its session has left.
func (c *call) treeGone(ctx context.Context, r *Result, op string, expired <-chan struct{}, since time.Time) {
	n, sig := r.Node, c.plan.sig
	if n.Cgroup == "" && !inSession(n) || n.KillMode == cgroup.Process || r.HeldBy != 0 {
		// A new instance of the node, started meanwhile, has its cgroup.
		return
	}
	rundir := c.rundir()
	if sig != syscall.SIGKILL {
		done := make(chan struct{})
		stop := context.AfterFunc(ctx, func() { close(done) })
		go func() {
			select {
			case <-expired:
				if stop() {
					close(done)
				}
			case <-done:
			}
		}()
		var ok bool
		var err error
		if n.Cgroup == "" {
			ok, err = c.waitSession(n, since, time.Time{}, done)
		} else {
			ok, err = cgroup.WaitEmpty(n.Cgroup, rundir, n.Name, time.Time{}, done)
		}
		if stop() {
			close(done)
		}
		if err != nil {
			r.fail(op, fmt.Errorf("stopped, but %w", err))
			return
		}
		if ok {
			c.removeCgroup(r, true)
			return
		}
		if ctx.Err() != nil {
			t, _ := c.lingering(n)
			r.fail(op, fmt.Errorf("lock released, but %s left in %s: %w", countProcs(len(t.Procs), "", ""), c.treeName(n), ctx.Err()))
			return
		}
	}
	killed, err := c.cleanCgroup(n)
	if err != nil {
		r.fail(op, fmt.Errorf("stopped, but %w", err))
		return
	}
	if len(killed) > 0 && sig != syscall.SIGKILL {
		r.Lingering = len(killed)
		if r.KilledAfter == 0 {
			r.KilledAfter = c.plan.timeout
		}
		if r.Outcome == Stopped {
			r.Outcome = KilledAfterTimeout
		}
	}
}

// removeCgroup removes r's node's emptied cgroup; and the rundir's
// folder once empty, unless the caller does that at its end
// (leaveParent: a stop of many nodes, see removeParents). No record lock
// is taken nor record read again: a start of the node that makes the
// same folder meanwhile holds it until its node is in it (see
// [cgroup.Make]), and a folder of another path is as empty.
func (c *call) removeCgroup(r *Result, leaveParent bool) {
	n := r.Node
	if n.Cgroup == "" {
		return // a session leaves nothing to remove
	}
	remove := cgroup.Remove
	if leaveParent {
		remove = cgroup.RemoveNode
	}
	if err := remove(n.Cgroup, c.rundir(), n.Name); err != nil {
		r.treeErr(err)
	}
}

// cgroupParents returns the rundir's cgroup folders of results' nodes,
// read before a stop begins: a restart starts nodes again, in the same
// results, while the stop goes on.
func cgroupParents(results []Result) []string {
	var out []string
	for i := range results {
		if cg := results[i].Node.Cgroup; cg != "" && !slices.Contains(out, filepath.Dir(cg)) {
			out = append(out, filepath.Dir(cg))
		}
	}
	return out
}

// removeParents removes those of parents that are left empty: once for a
// stop of many nodes, not once per node.
func removeParents(parents []string) {
	for _, p := range parents {
		cgroup.RemoveParent(p)
	}
}

// signalTree sends sig to the rest of r's node's cgroup (or session) too,
// under KillMode control-group.
func (c *call) signalTree(r *Result, op string, sig syscall.Signal) {
	n := r.Node
	if n.KillMode != cgroup.ControlGroup {
		return
	}
	if n.Cgroup == "" {
		if _, err := c.signalSession(n, sig); err != nil {
			r.fail(op, err)
		}
		return
	}
	if err := cgroup.Signal(n.Cgroup, c.rundir(), n.Name, sig); err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.fail(op, err)
	}
}

// cleanLingering kills, for stop, stopwait and kill, what is left in the
// cgroup of a node whose lock nobody holds (r says not running), and with
// wait waits until it is gone and removes the cgroup. An empty cgroup (its
// node exited on its own) is removed by each of them.
func (c *call) cleanLingering(r *Result, op string, wait bool) {
	n := r.Node
	if r.Err != nil || n.Cgroup == "" && !inSession(n) || n.KillMode == cgroup.Process {
		return
	}
	t, err := c.lingering(n)
	if err != nil {
		r.fail(op, err)
		return
	}
	if !t.Populated {
		c.removeCgroup(r, wait)
		return
	}
	if !wait {
		var err error
		if n.Cgroup == "" {
			_, err = c.signalSession(n, syscall.SIGKILL)
		} else {
			err = cgroup.Kill(n.Cgroup, c.rundir(), n.Name)
		}
		if err != nil {
			r.fail(op, err)
			return
		}
		r.Outcome, r.Signal, r.Lingering = Killed, syscall.SIGKILL, len(t.Procs)
		return
	}
	killed, err := c.cleanCgroup(n)
	if err != nil {
		r.fail(op, err)
		return
	}
	r.Outcome, r.Signal, r.Lingering = Killed, syscall.SIGKILL, len(killed)
}

// tree is what n's recorded cgroup (or session) holds, for its state
// st, its session seen by a look at /proc begun no earlier than since.
func (c *call) tree(n nodes.Node, st State, since time.Time) (Tree, error) {
	t := Tree{Containment: InCgroup, Cgroup: n.Cgroup}
	if n.Cgroup == "" {
		t.Containment = InSession
		if !inSession(n) {
			return t, nil
		}
	}
	ct, err := c.lingeringSince(n, since)
	if err != nil {
		return t, err
	}
	t.Procs, t.Memory, t.CPUUsec = len(ct.Procs), ct.Memory, ct.CPUUsec
	t.OOMKills, t.LimitHits = ct.OOMKills, ct.Hits
	t.Lingering = ct.Populated && (st == StateStopped || st == StateStale)
	return t, nil
}

// dropCgroup removes n's cgroup folder after a failed start, once nothing
// is left in it: what the start killed there (see [launch.Child.Stop]) is
// given failedTreeWait to go. A populated folder is never removed.
func dropCgroup(rundir string, n nodes.Node) {
	if n.Cgroup == "" {
		return
	}
	if info, err := pidfile.Inspect(n.PidFile); err == nil && info.State == pidfile.Running {
		return // another start's node runs in the folder: it is that node's now
	}
	cgroup.WaitEmpty(n.Cgroup, rundir, n.Name, time.Now().Add(failedTreeWait), nil)
	cgroup.Remove(n.Cgroup, rundir, n.Name)
}

// failedTreeWait bounds dropCgroup's wait: SIGKILLed processes are gone
// in milliseconds unless the kernel holds them (uninterruptible sleep).
const failedTreeWait = 2 * time.Second

// treeEmpty reports whether nothing of r's node's tree is left to wait
// for, removing its emptied cgroup through dirs (see [cgroup.Parents.Clear]):
// a node of one process, gone with its lock, costs a stop one rmdir, and
// no goroutine holding descriptors.
func (c *call) treeEmpty(r *Result, dirs *cgroup.Parents) bool {
	n := r.Node
	if n.KillMode == cgroup.Process || r.HeldBy != 0 || n.Cgroup == "" && !inSession(n) {
		return true
	}
	if n.Cgroup == "" {
		// A session is looked at by treeGone: one look at /proc serves
		// the nodes that ended meanwhile.
		return false
	}
	empty, err := dirs.Clear(n.Cgroup, c.rundir(), n.Name)
	if !empty {
		return false // treeGone waits, kills and says why
	}
	if err != nil {
		r.treeErr(err)
	}
	return true
}

// containment is the containment of c's starts, found at the first: a
// restart's or a run's many starts do not look again.
func (c *call) containment() cgroup.Containment {
	c.cgOnce.Do(func() { c.cg = cgroup.Detect(c.rundir()) })
	return c.cg
}

// treeName names n's tree in messages: its cgroup, or its session.
func (c *call) treeName(n nodes.Node) string {
	if n.Cgroup != "" {
		return "cgroup " + n.Cgroup
	}
	return fmt.Sprintf("session %d", c.recordedProcess(n).PID)
}
