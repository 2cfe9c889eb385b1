package multi

import (
	"errors"
	"runtime"
	"sync"
	"time"

	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/nodes"
)

// afterRelease is the work on r's node once its lock is released and its
// pidfile removed: its emptied cgroup removed, or (a tree left, or a
// session) a wait for its tree to go; then r is final.
func (s *stopWaiter) afterRelease(r *Result) {
	if afterReleaseHook != nil {
		afterReleaseHook(r)
	}
	if r.Err == nil && r.HeldBy == 0 && inSession(r.Node) {
		s.lookAtSession(r)
		return
	}
	if r.Err == nil && !s.c.treeEmpty(r, s.cgroups) {
		s.treeLater(r, time.Now()) // its lock holder is gone by now
		return
	}
	s.final(r)
}

// treeLater waits off the pool for r's tree to be gone (see treeGone),
// then makes r final; since is a time r's lock holder was gone by.
func (s *stopWaiter) treeLater(r *Result, since time.Time) {
	s.trees.Go(func() {
		// One tree looked at at a time: each look opens its folder, or
		// looks at /proc, beside the waiter's descriptors.
		s.treeMu.Lock()
		s.c.treeGone(s.ctx, r, s.op, s.expired, since)
		s.treeMu.Unlock()
		s.final(r)
	})
}

// sessionLooks are the nodes whose sessions the next look at /proc is
// for: one look serves every node released since the last one began.
type sessionLooks struct {
	mu      sync.Mutex
	pending []*Result
	running bool // a goroutine takes looks until none is pending
}

// lookAtSession queues r, whose lock holder is gone, for the next look
// at its session.
func (s *stopWaiter) lookAtSession(r *Result) {
	s.sessions.mu.Lock()
	s.sessions.pending = append(s.sessions.pending, r)
	start := !s.sessions.running
	s.sessions.running = true
	s.sessions.mu.Unlock()
	if start {
		s.trees.Go(s.lookSessions)
	}
}

// lookSessions takes looks at /proc, each for the sessions of the nodes
// queued when it began, until none is queued: a node whose session is
// empty is final; one whose session has a member left is waited for by
// treeGone, which polls (and kills after the timeout).
func (s *stopWaiter) lookSessions() {
	for {
		s.sessions.mu.Lock()
		rs := s.sessions.pending
		s.sessions.pending = nil
		if len(rs) == 0 {
			s.sessions.running = false
			s.sessions.mu.Unlock()
			return
		}
		s.sessions.mu.Unlock()
		since := time.Now() // every holder of rs was gone by now
		sts := make([]nodes.Started, len(rs))
		want := map[int]bool{}
		for i, r := range rs {
			// The process signalled: its session is the one to wait for.
			if sts[i] = r.Node.Recorded; sts[i].PID == 0 {
				sts[i] = s.c.recordedProcess(r.Node)
			}
			want[sts[i].PID] = sts[i].PID > 0
		}
		procs, err := proc.ReadSessions(want)
		bySession := map[int][]proc.Stat{}
		for _, p := range procs {
			bySession[p.Session] = append(bySession[p.Session], p)
		}
		for i, r := range rs {
			switch {
			case err != nil && !errors.Is(err, errors.ErrUnsupported), len(pin.Members(bySession[sts[i].PID], sts[i])) > 0:
				s.treeLater(r, since)
			default:
				s.final(r) // nothing left of its session (no /proc: its holder alone)
			}
		}
	}
}

// afterReleaseHook, when set (by a test), runs first in afterRelease.
var afterReleaseHook func(*Result)

// afterWorkers bounds the goroutines of an afterPool: one core is the
// waiter's loop's, and the work after a release is a few system calls
// (an unlink and an rmdir, which the kernel serializes per folder), so
// more goroutines than the other cores would only contend (strace -c of
// a stop of 1000: 4 on 2 cores made 7,683 nanosleeps of idle spinning
// threads and 1,552 futex calls; 1 made 1,789 and 881).
var afterWorkers = max(1, min(4, runtime.GOMAXPROCS(0)-1))

// An afterPool runs the work queued on it on up to afterWorkers
// goroutines, started as work comes; queuing never blocks the waiter's
// loop. The progress of nodes is reported in the order their work ends.
type afterPool struct {
	mu      sync.Mutex
	queue   []func()
	running int
	// wide: the signalling is over, and its core takes a worker too.
	wide bool
	wg   sync.WaitGroup
}

// workers is how many goroutines may run the pool's work.
func (p *afterPool) workers() int {
	if p.wide {
		return afterWorkers + 1
	}
	return afterWorkers
}

// do queues f, starting a worker if fewer than afterWorkers run.
func (p *afterPool) do(f func()) {
	p.mu.Lock()
	p.queue = append(p.queue, f)
	p.startWorker()
}

// widen lets one more worker run the work queued and to come: once the
// last node is signalled, the goroutine that signalled only waits, and
// the work after its release is what stands between the last node's
// death and stopWait's return.
func (p *afterPool) widen() {
	p.mu.Lock()
	p.wide = true
	if len(p.queue) == 0 {
		p.mu.Unlock()
		return
	}
	p.startWorker()
}

// startWorker starts a worker if fewer than p.workers() run; p.mu is
// held, and let go here.
func (p *afterPool) startWorker() {
	start := p.running < p.workers()
	if start {
		p.running++
	}
	p.mu.Unlock()
	if start {
		p.wg.Go(p.work)
	}
}

// afterBacklog is how much queued work the signalling leaves to the
// pool (see help).
const afterBacklog = 8

// help runs queued work on the calling goroutine while more than limit
// wait. The signalling calls it after each node: a worker that the Go
// scheduler or the kernel leaves waiting for a core while nodes die
// faster than it works would otherwise leave a backlog of nodes to finish
// after the last one is gone (up to 700 of 1000 seen), the wait's
// overhead; the signalling goroutine taking some of the work bounds that,
// at no cost in work.
func (p *afterPool) help(limit int) {
	for {
		p.mu.Lock()
		if len(p.queue) <= limit {
			p.mu.Unlock()
			return
		}
		f := p.pop()
		p.mu.Unlock()
		f()
	}
}

// pop takes the oldest queued work; p.mu is held and the queue not empty.
func (p *afterPool) pop() func() {
	f := p.queue[0]
	p.queue[0] = nil
	p.queue = p.queue[1:]
	return f
}

// work runs queued work until the queue is empty.
func (p *afterPool) work() {
	for {
		p.mu.Lock()
		if len(p.queue) == 0 {
			p.running--
			p.mu.Unlock()
			return
		}
		f := p.pop()
		p.mu.Unlock()
		f()
	}
}

// wait returns once every queued work is done.
func (p *afterPool) wait() { p.wg.Wait() }
