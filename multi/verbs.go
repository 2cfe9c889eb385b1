package multi

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"time"

	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// Start starts every node that is not running, concurrently, records
// each in the rundir, and returns once each runs its command holding its
// pidfile's lock or has failed. A node already running is left alone
// ([AlreadyRunning]). Nodes sharing a name or a pidfile
// ([ErrDuplicateNode]), or a record too large
// ([nodes.ErrRecordTooLarge]), fail the whole set before anything starts.
func (c *Cluster) Start(ctx context.Context) ([]Result, error) {
	v := c.call(StopOptions{}.plan())
	results := v.results()
	if !v.checkDistinct("start", results) || !v.checkFiles("start", results) || !v.checkRecords("start", results) || !v.makeRunDir("start", results) {
		return results, joinErrs(results)
	}
	v.startAll(ctx, results, func(int) (string, bool) { return "started", true })
	return results, joinErrs(results)
}

// Stop sends o.Signal to every running node and returns without waiting.
// A stale pidfile is removed, never signalled; a node not running is not
// an error (NotRunning, or StaleRemoved), here as in StopWait and Kill.
func (c *Cluster) Stop(ctx context.Context, o StopOptions) ([]Result, error) {
	v := c.call(o.plan())
	results := v.treeResults()
	if !v.checkDistinct("stop", results) {
		return results, joinErrs(results) // a node twice would be signalled twice
	}
	sig := v.plan.sig
	dirs := pidfile.NewFolders()
	defer dirs.Close()
	for i := range results {
		r := &results[i]
		if err := ctx.Err(); err != nil {
			r.fail("stop", err)
		} else if ok, _, _ := v.signalOne(r, "stop", sig, dirs, nil, false); ok {
			r.Outcome = Signalled
			v.signalTree(r, "stop", sig)
		} else {
			v.cleanLingering(r, "stop", false)
		}
		v.report(r)
	}
	return results, joinErrs(results)
}

// StopWait sends o.Signal to every running node, then waits until each
// node's lock is released and removes its pidfile. With o.Timeout, nodes
// still holding their lock when it runs out get SIGKILL, and are waited
// for again. If ctx ends the wait, the nodes still running fail with ctx's
// error.
func (c *Cluster) StopWait(ctx context.Context, o StopOptions) ([]Result, error) {
	v := c.call(o.plan())
	results := v.treeResults()
	v.stopWait(ctx, results, stopOpts{op: "stopwait", report: true})
	return results, joinErrs(results)
}

// Kill sends SIGKILL to every running node, waits until each lock is
// released, and removes the pidfiles. Of o, Kill reads Wait, Group, Lost
// and Signalled.
func (c *Cluster) Kill(ctx context.Context, o StopOptions) ([]Result, error) {
	v := c.call(o.killPlan())
	results := v.treeResults()
	v.stopWait(ctx, results, stopOpts{op: "kill", report: true})
	return results, joinErrs(results)
}

// Send sends sig (> 0) to every running node, through its lock, and
// returns without waiting: a HUP to reload, a USR1 to report. Of o it
// reads Group and Lost. A node's result is Signalled; one not running is
// reported so, its stale pidfile removed, and is not an error.
func (c *Cluster) Send(ctx context.Context, sig syscall.Signal, o StopOptions) ([]Result, error) {
	v := c.call(o.plan())
	v.plan.sig = sig
	results := v.treeResults()
	if !v.checkDistinct("signal", results) {
		return results, joinErrs(results) // a node twice would be signalled twice
	}
	for i := range results {
		r := &results[i]
		switch {
		case sig <= 0:
			r.fail("signal", fmt.Errorf("invalid signal %d", int(sig)))
		case ctx.Err() != nil:
			r.fail("signal", ctx.Err())
		default:
			if ok, _, _ := v.signalOne(r, "signal", sig, nil, nil, false); ok {
				r.Outcome = Signalled
			}
		}
		v.report(r)
	}
	return results, joinErrs(results)
}

// Restart restarts every node with its command, as recorded (a node not
// running is just started), once each command is seen able to start
// again: its folder there, its program found and executable; a node that
// is not is left as it is and fails. Without [RestartOptions.Rolling],
// as celery does, every node is signalled and each starts again the
// moment it is down; with it, one node at a time, and one that does not
// come up again halts the roll. The nodes get c.Env and their own
// recorded [nodes.Node.Env] entries.
func (c *Cluster) Restart(ctx context.Context, o RestartOptions) ([]Result, error) {
	v := c.call(o.Stop.plan())
	results := v.treeResults()
	if !v.checkDistinct("restart", results) || !v.checkFiles("restart", results) || !v.checkRecords("restart", results) || !v.makeRunDir("restart", results) {
		// Nothing could be started again: nothing is stopped either.
		return results, joinErrs(results)
	}
	// The nodes that pass the check, copied out so that stopWait and
	// startAll see only them; copied back at the end.
	var todo []int
	refused := v.refuseSupervised("restart", results)
	for i := range results {
		r := &results[i]
		if refused[i] {
			v.report(r)
			continue
		}
		if err := startable(r.Node, v.nodeEnv(r.Node)); err != nil {
			r.fail("restart", fmt.Errorf("%w: %w", errCannotRestart, err))
			v.report(r)
			continue
		}
		todo = append(todo, i)
	}
	sub := make([]Result, len(todo))
	for k, i := range todo {
		sub[k] = results[i]
	}
	if o.Rolling {
		v.restartRolling(ctx, sub, max(1, o.MaxUnavailable))
	} else {
		v.restartEach(ctx, sub)
	}
	for k, i := range todo {
		results[i] = sub[k]
	}
	return results, joinErrs(results)
}

// Status inspects every node's pidfile and says what each node is
// ([Status.State]), changing nothing but this: the pidfile a node left
// that a Stop or Send asked to end (its stop mark names the pid the file
// does) is removed, as multi's own, and the node reported stopped rather
// than stale. The error joins the Errs of the nodes whose state is
// unknown.
func (c *Cluster) Status(ctx context.Context) ([]Status, error) {
	v := c.call(StopOptions{}.plan())
	if c.AllowSharedFolders {
		// The nodes' folders (a file: check's among them), as the other
		// verbs accept them; not the rundir, whose records status reads.
		record.AcceptShared("", c.Nodes)
	}
	out := make([]Status, len(c.Nodes))
	var errs []error
	begun := time.Now() // one look at /proc serves every node's session
	for i, n := range c.Nodes {
		n = record.ResolveNode(v.rundir(), n)
		if err := v.status(ctx, &out[i], n, begun); err != nil {
			out[i].State, out[i].Err = StateUnknown, &NodeError{Node: n.Name, Op: "status", Err: err}
			errs = append(errs, out[i].Err)
		}
	}
	v.statusReady(ctx, out)
	return out, errors.Join(errs...)
}

// Only returns a Cluster with c's settings on the nodes of c named (by
// [nodes.Node.Name]), in c's order; a name that is not one of them is
// [ErrUnknownNode]. It shares c's Progress callback, not its lock.
func (c *Cluster) Only(names ...string) (*Cluster, error) {
	want := make(map[string]bool, len(names))
	for _, name := range names {
		want[name] = true
	}
	var ns []nodes.Node
	for _, n := range c.Nodes {
		if want[n.Name] {
			ns = append(ns, n)
			delete(want, n.Name)
		}
	}
	for _, name := range names {
		if want[name] {
			return nil, fmt.Errorf("multi: %w: %s", ErrUnknownNode, name)
		}
	}
	return c.sub(ns), nil
}

// sub is a new Cluster with c's settings on ns.
func (c *Cluster) sub(ns []nodes.Node) *Cluster {
	// Field by field: a Cluster holds a lock and is not copied whole.
	return &Cluster{Nodes: ns, RunDir: c.RunDir, Progress: c.Progress, LockTimeout: c.LockTimeout,
		Detach: c.Detach, Settle: c.Settle, ReadyTimeout: c.ReadyTimeout, Env: c.Env, AllowSharedFolders: c.AllowSharedFolders, Clean: c.Clean}
}

// status works out the state of n into s, its tree's processes seen by a
// look at /proc begun no earlier than since; the error says why it
// cannot be told. Readiness is statusReady's, for all nodes at once.
func (c *call) status(ctx context.Context, s *Status, n nodes.Node, since time.Time) error {
	s.Node = n
	info, err := pidfile.Inspect(n.PidFile)
	if err != nil {
		return err
	}
	if c.stoppedByMulti(n, info) {
		info = c.settleStopped(n, info) // stopped, not stale
	}
	s.PID, s.FilePID = info.PID, info.FilePID
	switch info.State {
	case pidfile.Foreign:
		return info.LockErr // not a node's lock: status cannot tell (LSB "unknown")
	case pidfile.Running:
		s.State = StateRunning
	case pidfile.Elsewhere:
		s.State = StateElsewhere
	case pidfile.Stale:
		s.State = StateStale
	default:
		s.State = StateStopped
	}
	// A process on its way out is given a moment, not waited for.
	if lost, stopping := c.lostProc(ctx, n, info, 0); lost != nil {
		s.State, s.PID, s.Started = StateLost, lost.PID, lost.Started
	} else if stopping != 0 {
		s.State, s.PID = StateStopping, stopping
	}
	if s.State == StateRunning {
		s.Started, _ = proc.StartTime(s.PID)
	}
	if s.Tree, err = c.tree(n, s.State, since); err != nil {
		return err
	}
	switch {
	case s.Tree.Lingering:
		s.State = StateLingering
	case s.State == StateStopped || s.State == StateStale:
		if s.Fatal = c.fatal(n); s.Fatal != "" {
			s.State = StateFatal
		}
	}
	return nil
}
