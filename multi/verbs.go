package multi

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

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
// record and the pidfile.
const startFDs = 10

// startConcurrency is startWorkers, fewer when RLIMIT_NOFILE is low, so
// that a low limit slows starts down rather than failing them.
func startConcurrency() int {
	return max(1, min(startWorkers, waiter.DescriptorBudget()/startFDs))
}

// Start starts every node that is not running, concurrently, and records
// each started node in the rundir. It returns once each node either runs
// its command holding its pidfile's lock or has failed. A node that is
// already running is left alone; its result wraps [ErrAlreadyRunning].
// Results are in the order of c.Nodes; the error joins the per-node errors.
func (c *Cluster) Start(ctx context.Context) ([]Result, error) {
	results := c.results()
	if !c.makeRunDir("start", results) {
		return results, joinErrs(results)
	}
	c.startAll(ctx, results, func(int) (string, bool) { return "started", true })
	return results, joinErrs(results)
}

// startAll starts the nodes of results for which verb says so (with the
// word for success), concurrently, then waits out the settle window once
// for all of them, checks each again, records its process and lets it go.
// Each result is reported once final.
//
// A node started is held (its process's pidfd) until the window is over,
// so under a low RLIMIT_NOFILE the set starts in batches, each paying the
// window once: slower, never failing for want of descriptors.
func (c *Cluster) startAll(ctx context.Context, results []Result, verb func(int) (string, bool)) {
	batch, workers := len(results), startConcurrency()
	if c.settle() > 0 {
		budget := waiter.DescriptorBudget()
		batch = max(1, budget/2)
		workers = max(1, min(startWorkers, (budget-batch)/startFDs))
	}
	for lo := 0; lo < len(results); lo += batch {
		hi := min(lo+batch, len(results))
		c.startBatch(ctx, results[lo:hi], workers, func(i int) (string, bool) { return verb(lo + i) })
	}
}

// startBatch is startAll for one batch, with at most workers starts at
// once.
func (c *Cluster) startBatch(ctx context.Context, results []Result, workers int, verb func(int) (string, bool)) {
	started := make([]*started, len(results))
	c.each(ctx, results, workers, func(i int, r *Result) {
		if _, ok := verb(i); ok {
			started[i] = c.startOne(r)
		}
		if started[i] == nil {
			c.report(r)
		}
	})
	kids := make([]*child, len(results))
	for i, s := range started {
		if s != nil {
			kids[i] = s.child
		}
	}
	c.settleAll(ctx, kids)
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
	child *child
	undo  func() // puts back the record there was before
}

// finishStart checks a spawned node again once the settle window is over
// (when there is one), records its process and lets it go.
func (c *Cluster) finishStart(r *Result, s *started, verb string) {
	ch := s.child
	if c.settle() > 0 {
		if err := ch.recheck(); err != nil {
			s.undo()
			r.fail("start", err)
			return
		}
	}
	// Its pid and start time, for a node that later lets go of its lock.
	// The record is synced like the first write: a node never leaves a
	// half-written record, and on a tmpfs such as /run it costs nothing.
	if p, err := nodes.ReadProc(ch.pid); err == nil {
		if err := nodes.WriteRecordStarted(c.rundir(), ch.node, nodes.Started{PID: ch.pid, StartTicks: p.StartTicks}); err != nil {
			r.warn("could not record the node's process: " + err.Error())
		}
	}
	ch.letGo(c.Detach)
	r.PID = ch.pid
	r.Msg = fmt.Sprintf("%s (pid %d)", verb, ch.pid)
}

// makeRunDir makes the rundir, and when it cannot, fails every result, so
// that no node starts when none could be recorded.
func (c *Cluster) makeRunDir(op string, results []Result) bool {
	err := nodes.MakeDir(c.rundir())
	if err == nil {
		return true
	}
	for i := range results {
		results[i].fail(op, fmt.Errorf("rundir: %w", err))
	}
	return false
}

// startOne spawns r.Node and returns it, or fills in r's failure and
// returns nil.
//
// The record is written before the node starts, so that no node runs
// unrecorded: not when the rundir cannot be written (nothing starts), and
// not when a start is killed half way (the next start finds the node
// running, recorded). A start that fails puts back the record that was
// there before, or removes its own; one that finds the node already
// running keeps the running node's record.
func (c *Cluster) startOne(r *Result) *started {
	n := r.Node
	if len(n.Command) == 0 {
		r.fail("start", ErrNoCommand)
		return nil
	}
	rundir := c.rundir()
	prev, prevStarted, prevErr := nodes.ReadRecordStarted(rundir, n.Name)
	if prevErr == nil && prevStarted.PID > 0 {
		// The recorded process may run without its lock: a second copy
		// would run beside it.
		if info, err := pidfile.Inspect(n.PidFile); err == nil {
			if lost := c.lostProc(n, info); lost != nil {
				lost.Start = true
				r.PID = lost.PID
				r.fail("start", lost)
				return nil
			}
		}
	}
	if err := nodes.WriteRecord(rundir, n); err != nil {
		r.fail("start", err)
		return nil
	}
	undo := func() {
		var err error
		if prevErr == nil {
			err = nodes.WriteRecordStarted(rundir, prev, prevStarted)
		} else {
			err = nodes.RemoveRecord(rundir, n.Name)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.warn("could not put back the node's record: " + err.Error())
		}
	}
	ch, err := spawn(n, c.env(), c.LockTimeout)
	var held *pidfile.HeldError
	if errors.As(err, &held) {
		if prevErr == nil {
			undo()
		}
		r.PID = held.PID
		r.Msg = held.Error()
		r.fail("start", held)
		return nil
	}
	if err != nil {
		undo()
		r.fail("start", err)
		return nil
	}
	return &started{child: ch, undo: undo}
}

// Stop sends c.Signal to every running node and returns without waiting.
// A stale pidfile is removed and never signalled.
func (c *Cluster) Stop(ctx context.Context) ([]Result, error) {
	results := c.results()
	sig := c.signal()
	for i := range results {
		r := &results[i]
		if err := ctx.Err(); err != nil {
			r.fail("stop", err)
		} else if c.signalOne(r, "stop", sig) {
			r.Msg = fmt.Sprintf("sent %s (pid %d)", SignalName(sig), r.PID)
		}
		c.report(r)
	}
	return results, joinErrs(results)
}

// StopWait sends c.Signal to every running node, then waits until each
// node's lock is released and removes its pidfile. With a Timeout, nodes
// still holding their lock when it runs out get SIGKILL, and are waited
// for again. If ctx ends the wait, the nodes still running fail with ctx's
// error.
func (c *Cluster) StopWait(ctx context.Context) ([]Result, error) {
	results := c.results()
	c.stopWait(ctx, "stopwait", results, c.signal(), c.Timeout, nil, true)
	return results, joinErrs(results)
}

// Kill sends SIGKILL to every running node, waits until each lock is
// released, and removes the pidfiles.
func (c *Cluster) Kill(ctx context.Context) ([]Result, error) {
	results := c.results()
	c.stopWait(ctx, "kill", results, syscall.SIGKILL, 0, nil, true)
	return results, joinErrs(results)
}

// Restart stopwaits every running node (as [Cluster.StopWait]) and then
// starts each node again with its command; a node that was not running is
// just started.
func (c *Cluster) Restart(ctx context.Context) ([]Result, error) {
	results := c.results()
	if !c.makeRunDir("restart", results) {
		// Nothing could be started again: nothing is stopped either.
		return results, joinErrs(results)
	}
	was := make([]bool, len(results))
	c.stopWait(ctx, "restart", results, c.signal(), c.Timeout, was, false)
	c.startAll(ctx, results, func(i int) (string, bool) {
		// A node that could not be stopped is not started twice.
		if results[i].Err != nil {
			return "", false
		}
		if was[i] {
			return "restarted", true
		}
		return "started", true
	})
	return results, joinErrs(results)
}

// stopWait signals the nodes of results and waits for them. When was is
// not nil, it records which nodes were running. With report, each result
// goes to c.Progress once final.
func (c *Cluster) stopWait(ctx context.Context, op string, results []Result, sig syscall.Signal, timeout time.Duration, was []bool, report bool) {
	var targets []waiter.Target
	byPath := map[string]*Result{}
	final := func(r *Result) {
		if report {
			c.report(r)
		}
	}
	// Lost nodes signalled (SignalLost) are waited for through pidfds,
	// beside the others.
	var lostWait sync.WaitGroup
	defer lostWait.Wait()
	for i := range results {
		r := &results[i]
		if err := ctx.Err(); err != nil {
			r.fail(op, err)
			final(r)
			continue
		}
		if IsStopSignal(sig) {
			r.fail(op, fmt.Errorf("%w (%s)", ErrStopSignal, SignalName(sig)))
			final(r)
			continue
		}
		if !c.signalOne(r, op, sig) {
			final(r)
			continue
		}
		if was != nil {
			was[i] = true
		}
		if c.Signalled != nil {
			c.Signalled(*r)
		}
		if r.lost.PID != 0 {
			lostWait.Go(func() {
				c.awaitLost(ctx, op, r, sig, timeout)
				final(r)
			})
			continue
		}
		targets = append(targets, waiter.Target{Path: r.Node.PidFile, PID: r.PID})
		byPath[r.Node.PidFile] = r
	}
	if len(targets) == 0 {
		return
	}
	released := map[string]bool{}
	done := func(t waiter.Target, err error) {
		r := byPath[t.Path]
		released[t.Path] = true
		if err != nil {
			r.fail(op, err)
		} else {
			c.stopped(r, op, sig)
		}
		final(r)
	}
	wctx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		wctx, cancel = context.WithTimeout(ctx, timeout)
	}
	err := waiter.WaitAll(wctx, targets, c.Wait, done)
	cancel()
	if err == nil {
		return
	}
	pending := func() []waiter.Target {
		var left []waiter.Target
		for _, t := range targets {
			if !released[t.Path] {
				left = append(left, t)
			}
		}
		return left
	}
	giveUp := func(left []waiter.Target, err error) {
		for _, t := range left {
			r := byPath[t.Path]
			r.fail(op, fmt.Errorf("still running (pid %d): %w", t.PID, err))
			final(r)
		}
	}
	if ctx.Err() != nil || sig == syscall.SIGKILL {
		giveUp(pending(), ctx.Err())
		return
	}
	// The timeout ran out: SIGKILL the same processes, and wait again.
	for _, t := range pending() {
		r := byPath[t.Path]
		if _, err := signalNode(t.Path, t.PID, syscall.SIGKILL, c.Group); err != nil && !errors.Is(err, ErrNotRunning) {
			r.fail(op, err)
			released[t.Path] = true
			final(r)
			continue
		}
		r.warn(fmt.Sprintf("still running after %s; sent KILL (pid %d)", timeout, t.PID))
	}
	left := pending()
	if err := waiter.WaitAll(ctx, left, c.Wait, func(t waiter.Target, err error) {
		r := byPath[t.Path]
		released[t.Path] = true
		if err != nil {
			r.fail(op, err)
		} else {
			c.stopped(r, op, sig)
			r.Msg = fmt.Sprintf("killed after %s (pid %d)", timeout, t.PID) + strings.TrimPrefix(r.Msg, fmt.Sprintf("stopped (pid %d)", t.PID))
		}
		final(r)
	}); err != nil {
		giveUp(pending(), err)
	}
}

// signalOne sends sig to r.Node through its lock and reports whether it
// did. When it did not, r says why: not running (a stale pidfile is
// removed), or a failure.
func (c *Cluster) signalOne(r *Result, op string, sig syscall.Signal) bool {
	c.untagRun(r.Node.Name, op, sig) // before the signal: see runTagExt
	info, err := signalNode(r.Node.PidFile, 0, sig, c.Group)
	switch {
	case errors.Is(err, ErrNotRunning):
		if c.lostOne(r, op, sig, info) {
			return r.Err == nil
		}
		c.notRunning(r, op, info)
		return false
	case err != nil:
		r.PID = info.PID
		r.fail(op, err)
		return false
	}
	if info.Mismatch() {
		r.warn(fmt.Sprintf("pidfile %s says %s but the lock holder is pid %d; using %d",
			r.Node.PidFile, describeFilePID(info), info.PID, info.PID))
	}
	r.PID = info.PID
	return true
}

// lostOne deals with a node whose lock nobody holds but whose recorded
// process may run (see [LostError]), and reports whether it did: without
// c.SignalLost it fails, its record and pidfile kept; with it, the process
// is signalled once pinned and checked, and r.lost names it.
func (c *Cluster) lostOne(r *Result, op string, sig syscall.Signal, info pidfile.Info) bool {
	if !c.SignalLost {
		lost := c.lostProc(r.Node, info)
		if lost == nil {
			return false
		}
		r.PID = lost.PID
		r.fail(op, lost)
		return true
	}
	st, ok := c.lostCandidate(r.Node, info)
	if !ok {
		return false
	}
	// signalLost makes the only start-time check that counts: after the
	// pidfd pins the process.
	sent, err := signalLost(st, sig)
	if err != nil {
		r.PID = st.PID
		r.fail(op, err)
		return true
	}
	if !sent {
		return false // gone, or the pid is another's: not running
	}
	r.PID, r.lost = st.PID, st
	return true
}

func describeFilePID(info pidfile.Info) string {
	if info.FileErr != nil {
		return "no valid pid"
	}
	return fmt.Sprintf("pid %d", info.FilePID)
}

// notRunning reports a node with nothing to signal, as info found it,
// removing a stale pidfile.
func (c *Cluster) notRunning(r *Result, op string, info pidfile.Info) {
	if info.State == pidfile.Absent {
		r.Msg = "not running"
		return
	}
	err := pidfile.RemoveStale(r.Node.PidFile)
	var held *pidfile.HeldError
	switch {
	case errors.As(err, &held):
		// Started by someone else since we looked: leave it be.
		r.PID = held.PID
		r.Msg = fmt.Sprintf("not running before; now started by someone else (pid %d)", held.PID)
	case err != nil:
		r.fail(op, fmt.Errorf("stale pidfile not removed: %w", err))
	default:
		r.Msg = "not running (stale pidfile removed)"
	}
}

// stopped reports a node whose lock was released and removes its pidfile,
// unless another instance has locked it since.
func (c *Cluster) stopped(r *Result, op string, sig syscall.Signal) {
	word := "stopped"
	if sig == syscall.SIGKILL {
		word = "killed"
	}
	r.Msg = fmt.Sprintf("%s (pid %d)", word, r.PID)
	err := pidfile.RemoveStale(r.Node.PidFile)
	var held *pidfile.HeldError
	switch {
	case errors.As(err, &held):
		r.Msg += fmt.Sprintf("; pidfile now held by pid %d", held.PID)
	case err != nil:
		r.fail(op, fmt.Errorf("stopped, but %w", err))
	}
}

// A Status is one node's state, from its pidfile's lock.
type Status struct {
	Node nodes.Node
	pidfile.Info
	// Lost, if not nil, says the node is lost: nothing holds its lock
	// (State is Absent or Stale) but the process its record names, with
	// the same start time, still runs.
	Lost *LostError
	// Err is set when the pidfile could not be inspected, or is locked by
	// something that is not a node (State [pidfile.Foreign]; Err then
	// matches [ErrForeignLock]).
	Err error
}

// Status inspects every node's pidfile, changing nothing.
func (c *Cluster) Status(ctx context.Context) ([]Status, error) {
	out := make([]Status, len(c.Nodes))
	var errs []error
	for i, n := range c.Nodes {
		out[i].Node = n
		info, err := pidfile.Inspect(n.PidFile)
		out[i].Info = info
		switch {
		case err == nil && info.State == pidfile.Foreign:
			// Not a node's lock: status cannot tell (LSB "unknown").
			err = info.LockErr
		case err == nil:
			out[i].Lost = c.lostProc(n, info)
		}
		if err != nil {
			out[i].Err = &NodeError{Node: n.Name, Op: "status", Err: err}
			errs = append(errs, out[i].Err)
		}
	}
	return out, errors.Join(errs...)
}

// report hands a final result to c.Progress, one call at a time.
func (c *Cluster) report(r *Result) {
	if c.Progress == nil {
		return
	}
	c.progressMu.Lock()
	defer c.progressMu.Unlock()
	c.Progress(*r)
}

func (c *Cluster) results() []Result {
	out := make([]Result, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i].Node = n
	}
	return out
}

// each runs f on every result with at most workers at once. Results not
// reached because ctx ended fail with ctx's error.
func (c *Cluster) each(ctx context.Context, results []Result, workers int, f func(int, *Result)) {
	sem := make(chan struct{}, max(workers, 1))
	var wg sync.WaitGroup
	for i := range results {
		r := &results[i]
		select {
		case <-ctx.Done():
			if r.Err == nil && r.Msg == "" {
				r.fail("start", ctx.Err())
			}
			continue
		case sem <- struct{}{}:
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f(i, r)
		}()
	}
	wg.Wait()
}
