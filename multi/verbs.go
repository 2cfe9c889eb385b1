package multi

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/multi-launcher/multi/internal/engine"
	"github.com/multi-launcher/multi/nodes"
)

// Start starts every node that is not running, concurrently, and records
// each started node in the rundir. It returns once each node either runs
// its command holding its pidfile's lock or has failed. A node that is
// already running is left alone; its result wraps [ErrAlreadyRunning].
// Two nodes with one name or one pidfile fail the whole set with
// [ErrDuplicateNode] before anything starts, and a node whose record would
// be too large with [nodes.ErrRecordTooLarge].
// Results are in the order of c.Nodes; the error joins the per-node errors.
func (c *Cluster) Start(ctx context.Context) ([]Result, error) {
	return results(c.set().Start(ctx))
}

// Stop sends o.Signal to every running node and returns without waiting.
// A stale pidfile is removed and never signalled. A node that is not
// running is not an error (its Outcome is NotRunning, or StaleRemoved),
// here as in StopWait and Kill. A set that names a node twice is refused ([ErrDuplicateNode]).
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

// Send sends sig to every running node, through its lock as every verb
// does (see Signals in the package doc), and returns without waiting: a
// HUP to reload, a USR1 to report. Unlike [Cluster.Stop] it is not a stop
// and sends sig, not o.Signal (of o it reads Group and Lost); a node's
// result is Signalled, with its Signal and PID. A node
// that is not running is reported so, its stale pidfile removed, and is
// not an error. sig must be a signal (> 0). A set that names a node twice
// is refused ([ErrDuplicateNode]).
func (c *Cluster) Send(ctx context.Context, sig syscall.Signal, o StopOptions) ([]Result, error) {
	return results(c.set().Send(ctx, sig, o.engine()))
}

// Restart restarts every node with its command; a node that was not
// running is just started.
//
// Before anything is signalled, each node's command is checked to be able
// to start again as recorded: its folder ([nodes.Node.Dir]) present and its
// program found (on the PATH it is looked up on, see [Cluster.Env], in that folder)
// and executable. A node that fails the check is left as it is and fails
// with [ErrCannotRestart]; the others are restarted.
//
// Without [RestartOptions.Rolling], as celery does, every node is signalled, and
// each is started again the moment its lock is released (and the process
// signalled is gone), without waiting for the slowest. With Rolling, one
// node at a time (see [RestartOptions.Rolling]); a node that does not come up
// again halts the roll, and the nodes after it are left as they are with
// [ErrRollingHalted].
//
// The node is started with c.Env (nil: this process's environment) and its
// own recorded [nodes.Node.Env] entries, not with the whole environment it
// was first started with.
func (c *Cluster) Restart(ctx context.Context, o RestartOptions) ([]Result, error) {
	return results(c.set().Restart(ctx, engine.RestartOptions{Stop: o.Stop.engine(), Rolling: o.Rolling}))
}

// Status inspects every node's pidfile, changing nothing.
func (c *Cluster) Status(ctx context.Context) ([]Status, error) {
	st, _ := c.set().Status(ctx)
	out := make([]Status, len(st))
	var errs []error
	for i, s := range st {
		out[i] = Status{Node: s.Node, Info: s.Info, Stopping: s.Stopping, Err: nodeErr(s.Err)}
		if s.Lost != nil {
			out[i].Lost = &LostError{PID: s.Lost.PID, Started: s.Lost.Started, Start: s.Lost.Start}
		}
		if out[i].Err != nil {
			errs = append(errs, out[i].Err)
		}
	}
	return out, errors.Join(errs...)
}

// Only returns a new Cluster with the same settings as c on the nodes of
// c named (by short name, [nodes.Node.Name]), in c's order, so that a
// caller can act on a subset without building a Cluster of its own. A
// name that is not one of c's nodes is an error wrapping
// [ErrUnknownNode], and no Cluster is returned. The new Cluster shares
// c's Progress callback but not c's Progress lock: verbs of
// c and of the subset that run at once may call Progress at once.
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
		Detach: c.Detach, Settle: c.Settle, Env: c.Env, AllowSharedFolders: c.AllowSharedFolders}
}

// set is the engine's view of c, for one call: c's settings, and c's
// Progress lock, so that Progress is called one call at a time across
// the verbs that run at once on c.
func (c *Cluster) set() *engine.Set {
	s := &engine.Set{Nodes: c.Nodes, RunDir: c.RunDir, LockTimeout: c.LockTimeout, Detach: c.Detach,
		Settle: c.Settle, Env: c.Env, AllowSharedFolders: c.AllowSharedFolders, Mu: &c.progressMu}
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
		TookOver: r.TookOver, Lost: r.Lost, RecordErr: r.RecordErr, Err: nodeErr(r.Err), Elapsed: r.Elapsed}
	if r.Exit != nil {
		out.Exit = &ExitStatus{Code: r.Exit.Code, Signal: r.Exit.Signal}
	}
	return out
}

// nodeErr is err, the engine's *NodeError, as multi's.
func nodeErr(err error) error {
	var ne *engine.NodeError
	if errors.As(err, &ne) {
		return &NodeError{Node: ne.Node, Op: ne.Op, Err: ne.Err}
	}
	return err
}
