package multi

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/multi-launcher/multi/internal/engine"
	"github.com/multi-launcher/multi/nodes"
)

// Start starts every node that is not running, concurrently, records
// each in the rundir, and returns once each runs its command holding its
// pidfile's lock or has failed. A node already running is left alone
// ([ErrAlreadyRunning]). Nodes sharing a name or a pidfile
// ([ErrDuplicateNode]), or a record too large
// ([nodes.ErrRecordTooLarge]), fail the whole set before anything starts.
func (c *Cluster) Start(ctx context.Context) ([]Result, error) {
	return results(c.set().Start(ctx))
}

// Stop sends o.Signal to every running node and returns without waiting.
// A stale pidfile is removed, never signalled; a node not running is not
// an error (NotRunning, or StaleRemoved), here as in StopWait and Kill.
func (c *Cluster) Stop(ctx context.Context, o StopOptions) ([]Result, error) {
	return results(c.set().Stop(ctx, o.engine()))
}

// StopWait sends o.Signal to every running node, then waits until each
// node's lock is released and removes its pidfile. With o.Timeout, nodes
// still holding their lock when it runs out get SIGKILL, and are waited
// for again. If ctx ends the wait, the nodes still running fail with ctx's
// error.
func (c *Cluster) StopWait(ctx context.Context, o StopOptions) ([]Result, error) {
	return results(c.set().StopWait(ctx, o.engine()))
}

// Kill sends SIGKILL to every running node, waits until each lock is
// released, and removes the pidfiles. Of o, Kill reads Wait, Group, Lost
// and Signalled.
func (c *Cluster) Kill(ctx context.Context, o StopOptions) ([]Result, error) {
	return results(c.set().Kill(ctx, o.engine()))
}

// Send sends sig (> 0) to every running node, through its lock, and
// returns without waiting: a HUP to reload, a USR1 to report. Of o it
// reads Group and Lost. A node's result is Signalled; one not running is
// reported so, its stale pidfile removed, and is not an error.
func (c *Cluster) Send(ctx context.Context, sig syscall.Signal, o StopOptions) ([]Result, error) {
	return results(c.set().Send(ctx, sig, o.engine()))
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
	return results(c.set().Restart(ctx, engine.RestartOptions{Stop: o.Stop.engine(), Rolling: o.Rolling, MaxUnavailable: o.MaxUnavailable}))
}

// Status inspects every node's pidfile, changing nothing but this: the
// pidfile a node left that a Stop or Send asked to end (its stop mark
// names the pid the file does) is removed, as multi's own, and the node
// reported stopped rather than stale.
func (c *Cluster) Status(ctx context.Context) ([]Status, error) {
	st, _ := c.set().Status(ctx)
	out := make([]Status, len(st))
	var errs []error
	for i, s := range st {
		out[i] = Status{Node: s.Node, Info: s.Info, Stopping: s.Stopping, Tree: Tree(s.Tree), Err: nodeErr(s.Err), Ready: s.Ready, ReadyErr: s.ReadyErr, ReadyStatus: s.ReadyStatus, Fatal: s.Fatal}
		if s.Lost != nil {
			out[i].Lost = &LostError{PID: s.Lost.PID, Started: s.Lost.Started, Start: s.Lost.Start}
		}
		if out[i].Err != nil {
			errs = append(errs, out[i].Err)
		}
	}
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

// set is the engine's view of c, for one call: c's settings, and c's
// Progress lock, so that Progress is called one call at a time across
// the verbs that run at once on c.
func (c *Cluster) set() *engine.Set {
	s := &engine.Set{Nodes: c.Nodes, RunDir: c.RunDir, LockTimeout: c.LockTimeout, Detach: c.Detach,
		Settle: c.Settle, ReadyTimeout: c.ReadyTimeout, Env: c.Env, AllowSharedFolders: c.AllowSharedFolders, Clean: c.Clean, Mu: &c.progressMu}
	if s.Settle == 0 {
		s.Settle = DefaultSettle
	}
	if p := c.Progress; p != nil {
		s.Progress = func(r engine.Result) { p(result(r)) }
	}
	return s
}

// engine is o for the engine.
func (o StopOptions) engine() engine.StopOptions {
	e := engine.StopOptions{Signal: o.Signal, Timeout: o.Timeout, Wait: o.Wait, Group: o.Group, Lost: o.Lost}
	if f := o.Signalled; f != nil {
		e.Signalled = func(r engine.Result) { f(result(r)) }
	}
	return e
}

// results is the engine's results as multi's, and their errors joined.
func results(rs []engine.Result, _ error) ([]Result, error) {
	out := make([]Result, len(rs))
	var errs []error
	for i, r := range rs {
		out[i] = result(r)
		if out[i].Err != nil {
			errs = append(errs, out[i].Err)
		}
	}
	return out, errors.Join(errs...)
}

// result is r as multi's Result.
func result(r engine.Result) Result {
	out := Result{Node: r.Node, Outcome: Outcome(r.Outcome), PID: r.PID, Signal: r.Signal,
		KilledAfter: r.KilledAfter, OldPID: r.OldPID, FilePID: r.FilePID, HeldBy: r.HeldBy,
		TookOver: r.TookOver, Lost: r.Lost, Lingering: r.Lingering, RecordErr: r.RecordErr, Err: nodeErr(r.Err), Elapsed: r.Elapsed}
	if r.Exit != nil {
		out.Exit = &ExitStatus{Code: r.Exit.Code, Signal: r.Exit.Signal}
	}
	return out
}

// nodeErr is err, the engine's *NodeError, as multi's.
func nodeErr(err error) error {
	if err == nil {
		return nil // errors.As would allocate its target
	}
	var ne *engine.NodeError
	if errors.As(err, &ne) {
		return &NodeError{Node: ne.Node, Op: ne.Op, Err: ne.Err}
	}
	return err
}
