package multi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/internal/fdwait"
	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/internal/safefs"

	"github.com/multi-launcher/multi/nodes/pidfile"
	"github.com/multi-launcher/multi/waiter"
)

// stopOpts says what one stopWait does.
type stopOpts struct {
	op string // the verb, for errors: "stopwait", "kill", "restart"
	// was, if not nil, is set for each node that was running.
	was []bool
	// report hands each result to c.Progress once final; restart reports
	// its results only once the nodes are started again.
	report bool
	// down, if not nil, is called with each result once final (restart
	// starts the node again from it). It must not block.
	down func(*Result)
}

// stopWait signals the nodes of results and waits for them, as o says.
// Each node is waited for from the moment it is signalled (the waiting
// runs beside the signalling), so the wait ends soon after the last node
// dies, and each pidfile is removed as its node goes.
func (c *call) stopWait(ctx context.Context, results []Result, o stopOpts) {
	if !c.checkDistinct(o.op, results) {
		return // a node twice would be waited for under one path
	}
	s := &stopWaiter{c: c, stopOpts: o, byPath: map[string]*Result{}, released: map[string]bool{}, held: map[*Result]func(){},
		ctx: ctx, expired: make(chan struct{})}
	// Last, once every node's cgroup is removed.
	defer removeParents(cgroupParents(results))
	// Each folder of pidfiles is reached once; every pidfile in it is
	// opened, tested and removed relative to it.
	s.dirs = pidfile.NewFolders()
	defer s.dirs.Close()
	// So is each rundir's cgroup folder, each node's folder removed
	// relative to it.
	s.cgroups = cgroup.NewParents()
	defer s.cgroups.Close()
	// Each pidfile is opened once, by its signal, and the same handle is
	// waited on and removed through, as long as the descriptors last (half
	// the budget: the waiter adds a pidfd to each); beyond, the waiter and
	// the remover open the pidfile again, as they would without a handle.
	budget := waiter.DescriptorBudget()
	s.keep = budget / 2
	// With descriptors to spare for every node's pidfile and pidfd at
	// once, and more, the pool removes the pidfiles too (each handle
	// kept until then), and the rundir stays open for the run tags
	// (otherwise reached for each, its descriptor closed at once); under
	// a low limit the loop removes each pidfile and closes its handle,
	// so that the waiter's count of what is open holds (few_fds).
	s.plenty = budget >= 4*len(results)+64
	if d, err := safefs.OpenFolder(c.rundir(), false); s.plenty && err == nil {
		s.tags = d
		defer d.Close()
	}
	// Lost nodes signalled (StopOptions.Lost) are waited for through pidfds,
	// beside the others.
	var lostWait sync.WaitGroup
	defer lostWait.Wait()
	// in holds every target: sending never blocks the signalling.
	in := make(chan waiter.Target, len(results))
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type waitEnd struct {
		left []waiter.Target
		err  error
	}
	waited := make(chan waitEnd, 1)
	go func() {
		left, err := waiter.WaitEach(wctx, in, s.c.plan.wait, s.done(false))
		waited <- waitEnd{left, err}
	}()
	for i := range results {
		r := &results[i]
		ok, h, pidfd := s.signal(ctx, r)
		if ok {
			// Its target holds descriptors until it is final: a removal
			// short of one waits for them (fdwait).
			s.hold(r)
		}
		if !ok {
			c.cleanLingering(r, o.op, true)
			s.final(r)
			continue
		}
		c.signalTree(r, o.op, c.plan.sig)
		if o.was != nil {
			o.was[i] = true
		}
		if c.plan.signalled != nil {
			c.plan.signalled(*r)
		}
		if r.lost.PID != 0 {
			closeTarget(waiter.Target{Handle: h, Pidfd: pidfd})
			lostWait.Go(func() {
				c.awaitLost(ctx, o.op, r)
				s.final(r)
			})
			continue
		}
		// The pidfile's handle and the pidfd that pinned the holder go to
		// the waiter, and come back for the SIGKILL round: opened once.
		// Over when the process is gone, not only its lock: a node lets
		// go of its lock a moment before it exits, or lives on.
		t := waiter.Target{Path: r.Node.PidFile, PID: r.PID, Handle: h, Pidfd: pidfd, AwaitExit: true, KeepHandle: s.plenty}
		s.mu.Lock()
		s.targets = append(s.targets, t)
		s.byPath[r.Node.PidFile] = r
		s.mu.Unlock()
		in <- t
		s.after.help(afterBacklog)
	}
	close(in)
	s.after.widen()
	// The timeout runs from the last signal, as it did when the wait
	// began only then: every node has at least that long.
	if timeout := c.plan.timeout; timeout > 0 {
		defer time.AfterFunc(timeout, func() { close(s.expired); cancel() }).Stop()
	}
	defer s.trees.Wait() // before the timer stops: they wait for it
	defer s.after.wait() // before the trees: it starts them
	end := <-waited
	left := end.left
	for t := range in {
		// Not taken by WaitEach, which ended early: still pending.
		left = append(left, t)
	}
	if end.err == nil {
		return
	}
	if ctx.Err() != nil || c.plan.sig == syscall.SIGKILL {
		for _, t := range left {
			closeTarget(t)
		}
		s.giveUp(ctx.Err())
		return
	}
	if err := waiter.WaitAll(ctx, s.escalate(left), s.c.plan.wait, s.done(true)); err != nil {
		s.giveUp(err)
	}
}

// closeTarget closes what t has open.
func closeTarget(t waiter.Target) {
	if t.Handle != nil {
		t.Handle.Close()
	}
	if t.Pidfd != nil {
		t.Pidfd.Close()
	}
}

// A stopWaiter is one stopWait under way: the nodes it signalled and waits
// for, by pidfile, and those whose wait is over.
type stopWaiter struct {
	c *call
	stopOpts
	mu       sync.Mutex // guards targets, byPath, released and held
	targets  []waiter.Target
	byPath   map[string]*Result
	released map[string]bool
	held     map[*Result]func() // the descriptors' holds of the targets not final
	// keep is how many more pidfiles may stay open from signal to removal.
	keep int
	// dirs has the pidfiles' folders open; cgroups the cgroup folders of
	// the rundirs.
	dirs    *pidfile.Folders
	cgroups *cgroup.Parents
	// tags is the rundir, open for the run tags' removal; nil if it could
	// not be opened, or descriptors are short.
	tags *safefs.Folder
	// plenty: descriptors to spare; the pool removes each pidfile,
	// through the handle the waiter hands over (KeepHandle).
	plenty bool
	// after runs each node's work once its lock is released, off the
	// waiter's loop (see afterRelease).
	after afterPool
	// sessions are the nodes whose sessions the next look at /proc is
	// for (see lookAtSession).
	sessions sessionLooks
	// trees are the waits for nodes' cgroups to empty (see treeGone),
	// which end before stopWait does; expired closes at the timeout.
	trees   sync.WaitGroup
	treeMu  sync.Mutex
	ctx     context.Context
	expired chan struct{}
}

// signal sends the first signal to r's node, and reports whether it did
// (r says why not), with the pidfile's handle it used and the pidfd that
// pinned the holder, while s.keep lasts.
func (s *stopWaiter) signal(ctx context.Context, r *Result) (bool, *pidfile.Handle, *os.File) {
	if err := ctx.Err(); err != nil {
		r.fail(s.op, err)
		return false, nil, nil
	}
	if sig := s.c.plan.sig; pin.IsStopSignal(sig) {
		r.fail(s.op, fmt.Errorf("%w (%s)", errStopSignal, pin.SignalName(sig)))
		return false, nil, nil
	}
	ok, h, pidfd := s.c.signalOne(r, s.op, s.c.plan.sig, s.dirs, s.tags, s.keep > 0)
	if h != nil {
		s.keep--
	}
	return ok, h, pidfd
}

// hold counts r's target as holding descriptors, until r is final.
func (s *stopWaiter) hold(r *Result) {
	release := fdwait.Hold()
	s.mu.Lock()
	s.held[r] = release
	s.mu.Unlock()
}

// final is called once r is final.
func (s *stopWaiter) final(r *Result) {
	s.mu.Lock()
	release := s.held[r]
	delete(s.held, r)
	s.mu.Unlock()
	if release != nil {
		release()
	}
	if s.report {
		s.c.report(r)
	}
	if s.down != nil {
		s.down(r)
	}
}

// done returns what WaitAll calls when a target's wait is over; killed
// says it was SIGKILLed after the timeout.
func (s *stopWaiter) done(killed bool) func(waiter.Target, error) {
	return func(t waiter.Target, err error) {
		s.mu.Lock()
		r := s.byPath[t.Path]
		s.released[t.Path] = true
		s.mu.Unlock()
		if err != nil {
			if t.KeepHandle && t.Handle != nil {
				t.Handle.Close()
			}
			r.fail(s.op, err)
			s.final(r)
			return
		}
		if !t.KeepHandle {
			// Descriptors are short: the pidfile is removed here,
			// through the handle the waiter closes once this returns.
			s.stoppedOn(r, t.Handle, killed)
			s.after.do(func() { s.afterRelease(r) })
			return
		}
		// The rest is the pool's, the pidfile's removal through the
		// handle the lock was tested on (KeepHandle: the pool closes it)
		// included: the loop only tests locks.
		s.after.do(func() {
			s.stoppedOn(r, t.Handle, killed)
			if t.Handle != nil {
				t.Handle.Close()
			}
			s.afterRelease(r)
		})
	}
}

// stoppedOn is Set.stoppedOn for r, its pidfile removed through h (if not
// nil); killed: r's node was SIGKILLed after the timeout.
func (s *stopWaiter) stoppedOn(r *Result, h *pidfile.Handle, killed bool) {
	s.c.stoppedOn(r, s.op, s.c.plan.sig, h)
	if killed && r.Err == nil {
		r.Outcome = KilledAfterTimeout
	}
}

// escalate SIGKILLs, through their locks, the processes still holding them
// when the timeout ran out: left, the targets not over, on the handles and
// pidfds they still have open (see [pin.KillHeld]). It returns those to wait
// for again.
func (s *stopWaiter) escalate(left []waiter.Target) []waiter.Target {
	var again []waiter.Target
	for _, t := range left {
		s.mu.Lock()
		r := s.byPath[t.Path]
		s.mu.Unlock()
		if err := s.c.killRecorded(r.Node, t, syscall.SIGKILL); err != nil && !errors.Is(err, pin.ErrNotRunning) {
			closeTarget(t)
			r.fail(s.op, err)
			s.mu.Lock()
			s.released[t.Path] = true
			s.mu.Unlock()
			s.final(r)
			continue
		}
		r.KilledAfter = s.c.plan.timeout
		again = append(again, t)
	}
	return again
}

// pending returns the targets whose wait is not over.
func (s *stopWaiter) pending() []waiter.Target {
	var left []waiter.Target
	for _, t := range s.targets {
		if !s.released[t.Path] {
			t.Handle = nil // WaitAll has closed it
			left = append(left, t)
		}
	}
	return left
}

// giveUp fails every target still pending with err.
func (s *stopWaiter) giveUp(err error) {
	for _, t := range s.pending() {
		r := s.byPath[t.Path]
		r.fail(s.op, fmt.Errorf("still running (pid %d): %w", t.PID, err))
		s.final(r)
	}
}
