package multi

import (
	"context"
	"runtime"

	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/internal/fdwait"
	"github.com/multi-launcher/multi/internal/launch"

	"github.com/multi-launcher/multi/internal/ready"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/waiter"
)

// startWorkers bounds how many nodes start at once: each start is a fork,
// two execs and a pipe, and more in flight than a few per core only costs
// memory and descriptors.
var startWorkers = 4 * runtime.NumCPU()

// startFDs is about how many descriptors one start holds at once: the
// step's pipe, /dev/null three times, fork's own pipe and pidfd, the
// record and the pidfile; the node's cgroup folder and the walks that
// make and read it.
const startFDs = 14

// startConcurrency is startWorkers, fewer when RLIMIT_NOFILE is low, so
// that a low limit slows starts down rather than failing them.
func startConcurrency() int {
	return max(1, min(startWorkers, waiter.DescriptorBudget()/startFDs))
}

// startAll starts the nodes of results for which verb says so (with the
// word for success), concurrently, then waits out the settle window once
// for all of them, checks each again, records its process and lets it go.
// Each result is reported once final.
//
// A node started is held (its process's pidfd) until the window is over,
// so under a low RLIMIT_NOFILE the set starts in batches, each paying the
// window once: slower, never failing for want of descriptors.
func (c *call) startAll(ctx context.Context, results []Result, verb func(int) (string, bool)) {
	batch, workers := len(results), startConcurrency()
	if c.settle > 0 {
		budget := waiter.DescriptorBudget()
		batch = max(1, budget/2)
		workers = max(1, min(startWorkers, (budget-batch)/startFDs))
	}
	// Under a task limit, fewer workers, and this process's threads made
	// now, before the nodes take the room.
	workers, end, err := launch.BeginTasks(len(results), workers)
	if err != nil {
		for i := range results {
			if _, ok := verb(i); ok {
				results[i].fail("start", err)
			}
			c.startReport(&results[i])
		}
		return
	}
	defer end()
	// One containment for the call: a cgroup per node where multi can make
	// one (see package cgroup). Its rundir's folder, made to learn that,
	// goes again if no node is in it at the end (none started).
	cg := c.containment()
	if cg.Mode == cgroup.Cgroup {
		defer cgroup.RemoveParent(cg.Parent)
	}
	for lo := 0; lo < len(results); lo += batch {
		hi := min(lo+batch, len(results))
		c.startBatch(ctx, cg, results[lo:hi], workers, func(i int) (string, bool) { return verb(lo + i) })
	}
}

// startBatch is startAll for one batch, with at most workers starts at
// once.
func (c *call) startBatch(ctx context.Context, cg cgroup.Containment, results []Result, workers int, verb func(int) (string, bool)) {
	started := make([]*started, len(results))
	c.each(ctx, results, workers, func(i int, r *Result) {
		// A start holds descriptors until its node is let go: another
		// start short of one waits for them (fdwait).
		release := fdwait.Hold()
		if _, ok := verb(i); ok {
			started[i] = c.startOne(ctx, cg, r)
		}
		if started[i] == nil {
			release()
			c.startReport(r)
			return
		}
		started[i].release = release
	})
	kids := make([]*launch.Child, len(results))
	for i, s := range started {
		if s != nil && results[i].Node.Ready.Kind == "" && !results[i].runOnce {
			kids[i] = s.child
		}
	}
	// A node with a readiness check waits for it instead of the window.
	readyDone := c.readyWait(ctx, results, started)
	c.settleAll(ctx, kids)
	readyDone()
	// A node let go as it was ready needs only its result: here, not in
	// a goroutine of its own. If all were, that is all there is.
	rest := false
	for i, s := range started {
		switch {
		case s == nil:
		case s.letGo:
			word, _ := verb(i)
			c.finishStart(&results[i], s, word)
			s.release()
			c.startReport(&results[i])
			started[i] = nil
		default:
			rest = true
		}
	}
	if !rest {
		return
	}
	c.each(context.WithoutCancel(ctx), results, workers, func(i int, r *Result) {
		s := started[i]
		if s == nil {
			return
		}
		if r.runOnce {
			c.finishOnce(ctx, r, s) // waited for while the caller's ctx lasts
		} else {
			word, _ := verb(i)
			c.finishStart(r, s, word)
		}
		s.release()
		c.startReport(r)
	})
}

// started is a node spawned by startOne, not yet let go.
type started struct {
	child   *launch.Child
	tx      *startTx // the start's changes, to undo
	release func()   // of its descriptors' hold (fdwait.Hold)
	// notify is the node's notify socket (--ready=notify), readyErr why
	// its readiness check did not pass, cut why the wait for it was cut
	// short (the node is left running).
	notify   *ready.Notify
	readyErr error
	cut      error
	checked  bool          // its lock confirmed once it was ready
	letGo    bool          // and let go then (a detached start)
	mine     nodes.Started // its process, as recorded (zero if not)
}

// finishStart checks a spawned node again once the settle window is over
// (when there is one) and lets it go.
func (c *call) finishStart(r *Result, s *started, verb string) {
	ch := s.child
	if s.notify != nil && (c.rp == nil || s.readyErr != nil || !s.checked) {
		s.notify.Close()
	}
	r.PID, r.Containment = ch.PID(), containmentOf(r.Node)
	if s.readyErr != nil {
		// It ran: its record stays, without a process, so that status
		// says it is down and a start without a command starts it again.
		s.tx.recordDown()
		dropCgroup(c.rundir(), r.Node)
		r.fail("start", s.readyErr)
		r.Ready = Unready
		return
	}
	if s.cut != nil {
		// It runs, recorded: a stop finds it.
		ch.LetGo(c.Detach)
		r.fail("start", s.cut)
		r.Ready = Starting
		return
	}
	if r.Node.Ready.Kind != "" {
		r.Ready = Ready
	}
	if !s.checked && (c.settle > 0 || r.Node.Ready.Kind != "") {
		if err := ch.Recheck(); err != nil {
			s.tx.undo()
			dropCgroup(c.rundir(), r.Node)
			r.fail("start", err)
			return
		}
	}
	if !s.letGo {
		ch.LetGo(c.Detach)
	}
	if s.notify != nil && c.rp != nil && s.checked {
		c.keepNotify(r.Node, s)
	}
	r.Outcome = Started
	switch verb {
	case "restarted":
		r.Outcome = Restarted
	case "took over":
		r.TookOver = true
	}
}

// containmentOf is what holds the tree of n, started.
func containmentOf(n nodes.Node) Containment {
	if n.Cgroup != "" {
		return InCgroup
	}
	return InSession
}
