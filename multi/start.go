package multi

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"runtime"

	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/internal/launch"
	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/internal/safefs"

	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/internal/ready"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
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
			c.report(&results[i])
		}
		return
	}
	defer end()
	// One containment for the call: a cgroup per node where multi can make
	// one (see package cgroup).
	cg := c.containment()
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
		if _, ok := verb(i); ok {
			started[i] = c.startOne(ctx, cg, r)
		}
		if started[i] == nil {
			c.report(r)
		}
	})
	kids := make([]*launch.Child, len(results))
	for i, s := range started {
		if s != nil && results[i].Node.Ready.Kind == "" {
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
			c.report(&results[i])
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
		word, _ := verb(i)
		c.finishStart(r, s, word)
		c.report(r)
	})
}

// started is a node spawned by startOne, not yet let go.
type started struct {
	child *launch.Child
	undo  func() // puts back the record there was before
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
	r.PID = ch.PID()
	r.Containment = InSession
	if r.Node.Cgroup != "" {
		r.Containment = InCgroup
	}
	if s.readyErr != nil {
		s.undo()
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
			s.undo()
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

// startOne spawns r.Node and returns it, or fills in r's failure and
// returns nil.
//
// The record is written before the node starts, so that no node runs
// unrecorded: not when the rundir cannot be written (nothing starts), and
// not when a start is killed half way (the next start finds the node
// running, recorded); not when ctx has ended already (nothing is
// written). A start that fails puts back the record that was
// there before, or removes its own; one that finds the node already
// running keeps the running node's record.
func (c *call) startOne(ctx context.Context, cg cgroup.Containment, r *Result) *started {
	n := r.Node
	// A start cancelled before it begins leaves no trace: no record, no
	// logfile.
	if err := ctx.Err(); err != nil {
		r.fail("start", err)
		return nil
	}
	if len(n.Command) == 0 {
		r.fail("start", ErrNoCommand)
		return nil
	}
	rundir := c.rundir()
	// One start of the node at a time, here or in another multi, from
	// reading its record to recording the process it started: the record
	// always names the instance that holds the node's lock, and the loser
	// of a race leaves the winner's record alone.
	lk, err := record.Lock(ctx, rundir, n.Name)
	if err != nil {
		r.fail("start", err)
		return nil
	}
	defer lk.Unlock()
	prev, prevStarted, prevReady, prevErr := record.ReadReady(rundir, n.Name)
	info, infoErr := pidfile.Inspect(n.PidFile)
	if prevErr == nil && prevStarted.PID > 0 && infoErr == nil {
		// The recorded process may run without its lock: a second copy
		// would run beside it.
		// One on its way out (stopped a moment ago) is waited for.
		lost, stopping := c.lostProc(ctx, n, info, pin.GoneWait)
		if stopping != 0 {
			r.PID = stopping
			r.fail("start", stoppingError(stopping))
			return nil
		}
		if lost != nil {
			lost.Start = true
			r.PID = lost.PID
			r.fail("start", lost)
			return nil
		}
	}
	standby := c.rp.Standby(n)
	if !standby && infoErr == nil && (info.State == pidfile.Running || info.State == pidfile.Elsewhere) {
		// Running already: its record is left as it is.
		held := &pidfile.HeldError{Path: n.PidFile, PID: info.PID}
		r.PID = held.PID
		// Not the node this start means. A run fails on any node held
		// (or, --wait-for-lock, stands by for it), whatever it runs.
		if err := otherCommand(prev, n, held.PID); prevErr == nil && err != nil && c.rp == nil {
			r.fail("start", err)
			return nil
		}
		// Another node's pidfile, held by that node: not this node
		// running, and nothing to record.
		if prevErr != nil || prev.PidFile != n.PidFile {
			if err := c.othersPidfile(n); err != nil {
				r.fail("start", err)
				return nil
			}
		}
		r.alreadyRunning(held.PID)
		return nil
	}
	if pid := c.supervisor(n.Name); pid != 0 {
		// Down under a run, which starts it itself: one started here
		// would outlive the run.
		r.fail("start", &SupervisedError{RunPID: pid})
		return nil
	}
	if infoErr == nil && info.State == pidfile.Stale {
		safefs.RemoveIn(rundir, stopMark(n.Name)) // of the process before
	}
	// The tree of its last run, if left, and its cgroup for this one.
	cgPath, cgHeld, err := c.startCgroup(cg, prev, prevErr == nil, n, c.clean)
	if cgHeld != nil {
		defer cgHeld.Close()
	}
	if err != nil {
		r.fail("start", err)
		return nil
	}
	n.Cgroup, r.Node.Cgroup = cgPath, cgPath
	// A record that says this already, and names no process, is not
	// written again: its process is written once the node runs (one write
	// fewer per node, docs/benchmarks.md). One that names a process (a
	// start after a stop) is written again without it, so that until this
	// start records its own node a stop meanwhile, or after this start is
	// killed, checks the new holder against no process rather than against
	// the old one.
	same := prevErr == nil && prevStarted.PID == 0 && reflect.DeepEqual(prev, n)
	// A start that fails before its spawn leaves no cgroup folder either.
	unmade := func() {
		if cgHeld != nil {
			cgHeld.Close() // so that the drop can remove it
		}
		dropCgroup(rundir, n)
	}
	if !same {
		if err := record.Write(rundir, n); err != nil {
			unmade()
			r.fail("start", err)
			return nil
		}
	}
	// restore puts back the record there was before, under the record
	// lock.
	restore := func() {
		if same {
			return // the record is as it was
		}
		var err error
		if prevErr == nil {
			err = record.WriteReady(rundir, prev, prevStarted, prevReady)
		} else {
			err = record.Remove(rundir, n.Name)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.recordErr(fmt.Errorf("could not put back the node's record: %w", err))
		}
	}
	env, nt, err := c.readyEnv(n)
	if err != nil {
		restore()
		unmade()
		r.fail("start", err)
		return nil
	}
	if standby {
		// Its exec step waits for the lock for as long as it takes: other
		// starts of the node do not wait for the record lock meanwhile.
		lk.Unlock()
	}
	ch, err := launch.Spawn(ctx, c.rp, n, env, c.LockTimeout)
	if cgHeld != nil {
		// The step holds its folder now, or has joined it: let go of
		// ours, so that the failed start's drop below can remove it.
		cgHeld.Close()
	}
	if err != nil && nt != nil {
		nt.Close()
	}
	if standby {
		if lk, err := record.Lock(context.WithoutCancel(ctx), rundir, n.Name); err == nil {
			defer lk.Unlock()
		}
	}
	var held *pidfile.HeldError
	if errors.As(err, &held) {
		if prevErr == nil {
			if st, put := c.heldRecord(n, prevStarted, held.PID); put {
				prevStarted = st
				restore()
			}
		}
		r.alreadyRunning(held.PID)
		return nil
	}
	if err != nil {
		restore()
		dropCgroup(rundir, n) // its empty folder, unless a tree is left in it
		if ke := (*launch.KilledError)(nil); errors.As(err, &ke) {
			r.PID = ke.PID
		}
		r.fail("start", err)
		if r.Exit != nil && n.Ready.Kind != "" {
			r.Ready = Unready // it ran, and ended before it was ready
		}
		return nil
	}
	// Its pid and start time, for a node that later lets go of its lock:
	// recorded now, while other nodes are still starting, rather than
	// after the settle window (a node that fails in it gets undo). The
	// record is synced like the first write: a node never leaves a
	// half-written record, and on a tmpfs such as /run it costs nothing.
	var mine nodes.Started
	if st, err := pin.Identify(ch.PID()); err == nil {
		if err := record.WriteReady(rundir, n, st, record.Readiness{LogOffset: ch.LogOffset()}); err != nil {
			r.recordErr(fmt.Errorf("could not record the node's process: %w", err))
		} else {
			mine = st
		}
	}
	// undo, once the record lock is let go: puts back the record there
	// was before, unless another start has recorded its own since.
	undo := func() {
		lk, err := record.Lock(context.Background(), rundir, n.Name)
		if err != nil {
			r.recordErr(fmt.Errorf("could not put back the node's record: %w", err))
			return
		}
		defer lk.Unlock()
		cur, curStarted, err := record.ReadStarted(rundir, n.Name)
		if err != nil {
			return
		}
		// A pid and start time name one process: this start's.
		if mine.PID != 0 && curStarted == mine || mine.PID == 0 && curStarted.PID == 0 && reflect.DeepEqual(cur, n) {
			restore()
		}
	}
	return &started{child: ch, undo: undo, notify: nt, mine: mine}
}
