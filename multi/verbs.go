package multi

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"time"

	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// Start starts every node not running, recorded, and returns once each
// runs holding its lock (and passed its readiness check), or failed.
func (c *Cluster) Start(ctx context.Context) ([]Result, error) {
	v := c.call(StopOptions{}.plan())
	results := v.results()
	if !v.checkDistinct("start", results) || !v.checkFiles("start", results) || !v.checkRecords("start", results) || !v.checkLimits("start", results) {
		return results, joinErrs(results)
	}
	if hasAfter(c.Nodes) {
		g, err := v.needGraph(results, true)
		if err != nil {
			failAll(results, "start", err)
		} else if v.makeRunDir("start", results) {
			v.startInOrder(ctx, results, g)
		}
		return results, joinErrs(results)
	}
	if !v.makeRunDir("start", results) {
		return results, joinErrs(results)
	}
	v.startAll(ctx, results, func(int) (string, bool) { return "started", true })
	return results, joinErrs(results)
}

// Stop sends o.Signal to every running node, not waiting; a stale
// pidfile is removed, never signalled.
func (c *Cluster) Stop(ctx context.Context, o StopOptions) ([]Result, error) {
	v := c.call(o.plan())
	results := v.treeResults()
	if !v.checkDistinct("stop", results) {
		return results, joinErrs(results) // a node twice would be signalled twice
	}
	order, ok := v.stopOrder("stop", results)
	if !ok {
		return results, joinErrs(results)
	}
	sig := v.plan.sig
	dirs := pidfile.NewFolders()
	defer dirs.Close()
	for _, i := range order {
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

// StopWait sends o.Signal to every running node and waits until its lock
// and its tree are gone (SIGKILL after o.Timeout), its pidfile removed.
func (c *Cluster) StopWait(ctx context.Context, o StopOptions) ([]Result, error) {
	v := c.call(o.plan())
	results := v.treeResults()
	v.stopAll(ctx, results, stopOpts{op: "stopwait", report: true})
	return results, joinErrs(results)
}

// Kill is StopWait with SIGKILL at once.
func (c *Cluster) Kill(ctx context.Context, o StopOptions) ([]Result, error) {
	v := c.call(o.killPlan())
	results := v.treeResults()
	v.stopAll(ctx, results, stopOpts{op: "kill", report: true})
	return results, joinErrs(results)
}

// Send sends sig to every running node, as Stop does: a HUP to reload.
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

// Restart stops and starts again every node whose command can start (a
// node down is just started); a rolling one halts at a node not up.
func (c *Cluster) Restart(ctx context.Context, o RestartOptions) ([]Result, error) {
	v := c.call(o.Stop.plan())
	v.startsOwnReport = true // restartOne reports each start
	results := v.treeResults()
	if !v.checkDistinct("restart", results) || !v.checkFiles("restart", results) || !v.checkRecords("restart", results) || !v.checkLimits("restart", results) || !v.makeRunDir("restart", results) {
		// Nothing could be started again: nothing is stopped either.
		return results, joinErrs(results)
	}
	var g *needGraph
	if hasAfter(c.Nodes) {
		var err error
		if g, err = v.needGraph(results, true); err != nil {
			failAll(results, "restart", err)
			return results, joinErrs(results)
		}
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
		env, err := v.nodeEnv(r.Node)
		if err == nil {
			err = startable(r.Node, env)
		}
		if err != nil {
			r.fail("restart", fmt.Errorf("%w: %w", errCannotRestart, err))
			v.report(r)
			continue
		}
		todo = append(todo, i)
	}
	if g != nil && !o.Rolling {
		// Down in the reverse order of the waves, up in their order.
		v.restartInOrder(ctx, results, g)
		return results, joinErrs(results)
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

// Status says what each node is. It changes nothing but the pidfile a
// node left that a Stop of multi's ended: removed, the node stopped, not
// stale.
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

// Only returns a Cluster with c's settings on the nodes named, in c's order.
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
		// Held by another process than the record names (its pidfile
		// replaced by another's, a decoy): not this node, which, if its
		// process runs, is lost.
		if want := n.Recorded; want.PID != 0 && !pin.ProcIs(s.PID, want) {
			he := pin.NewHolderError(s.PID, want)
			he.Node, he.PidFile = n.Name, n.PidFile
			s.State, s.Err = StateMismatch, &NodeError{Node: n.Name, Op: "status", Err: he}
		}
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
