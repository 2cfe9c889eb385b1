// Package waiter waits for pidfile locks to be released.
//
// A node holds a POSIX lock on its pidfile for its whole life and the kernel
// drops that lock when the node dies, SIGKILL included, and before its
// parent has reaped it. So "the lock is released" is the one test of death
// that neither zombies nor recycled pids can fool, where kill(pid, 0) is
// fooled by both.
//
// Each pidfile is opened once and its lock tested on that open file, so a
// node that unlinks its pidfile while it is still exiting is waited for
// until it is really gone.
//
// Descriptors are bounded by [DescriptorBudget]: pidfiles beyond it are
// opened for each test and closed again, until a kept one is released, and
// a test that finds no descriptor free (EMFILE) is tried again later, never
// taken for the node's failure.
//
// # Strategies
//
// A [Strategy] is a setting of the one wait that [Wait], [WaitAll] and
// [WaitEach] share. [Poll], the default, tests every lock with fcntl(F_GETLK): at once, then
// after short delays that double up to a bound, so quick deaths are seen
// within a fraction of a millisecond and long waits cost little CPU. On
// Linux, a pidfd on each holder (as many as the descriptor budget allows;
// the one the caller pinned it with, if given) wakes the test of its lock
// the moment it exits, so a late death is seen at once, not at the next,
// backed-off round; all of them wait in one epoll instance.
//
// [Notify] adds an fsnotify watch on the folder (a pidfile removed,
// replaced or rewritten) of each target whose holder has no pidfd: on
// systems without pidfds, beyond the descriptor budget, or on a kernel
// that refuses them. Where every holder has a pidfd it makes no inotify
// instance at all (closing one blocks the command's exit), and waits as
// Poll does, with a slower poll underneath. Every wake-up tests the lock
// again, and the poll stays underneath, for a lock let go without an exit
// and because fsnotify sees nothing when a process is SIGKILLed and leaves
// its pidfile behind.
package waiter

import (
	"context"
	"os"
	"slices"
	"time"

	"github.com/multi-launcher/multi/nodes/pidfile"
)

// A Target is a pidfile whose lock is awaited.
type Target struct {
	// Path is the pidfile.
	Path string
	// PID, if positive, is the holder being waited for: the target is
	// released once that process no longer holds the lock, even if another
	// has taken it since (a node restarted by someone else). Zero means
	// released only when nobody holds the lock.
	PID int
	// Handle, if not nil, is Path already open (a caller that tested the
	// lock on it before), which WaitAll tests instead of opening Path: see
	// WaitAll for who closes it.
	Handle *pidfile.Handle
	// Pidfd, if not nil, is a pidfd (Linux) of the process PID: the one
	// a caller pinned PID with to signal it.
	// The waiter takes it over as it does Handle, and watches it for the
	// exit instead of opening a pidfd of its own; it never signals
	// through it.
	Pidfd *os.File
	// AwaitExit: the target is over once its lock is released and its
	// holder, watched through a pidfd (Linux), has exited too (a zombie
	// has), not at the release alone: a process may let go of its lock
	// and live on, exiting or not. Without a pidfd the lock decides.
	AwaitExit bool
	// KeepHandle: the handle done is given with the target over (the
	// pidfile, open where its lock was last tested) is done's to close,
	// not the waiter's: a caller that removes the pidfile through it off
	// the waiter's goroutine.
	KeepHandle bool
}

// A Strategy decides how to wait: [Poll] and [Notify] are the two there
// are. Both are settings of the one loop that [Wait], [WaitAll] and
// [WaitEach] share: how often the rounds of lock tests come, whether
// fsnotify watches the folders of targets whose holder has no pidfd, and
// what a kept target costs.
type Strategy interface {
	config() config
}

// Poll tests each lock at once, then after First, then after delays that
// double up to Max; on Linux, a holder's exit also tests its lock at once.
// In [WaitEach], once every pending holder has a pidfd, the rounds (left
// for a holder that lets go of its lock without exiting) start at Max and
// back off to a second, or Max if longer.
type Poll struct {
	// First is the delay after the first test; zero means 100µs.
	First time.Duration
	// Max bounds the delay between tests; zero means 250ms.
	Max time.Duration
}

// next is the delay after d in the backoff, the first one for d <= 0.
func (p Poll) next(d time.Duration) time.Duration {
	first, max := p.First, p.Max
	if first <= 0 {
		first = 100 * time.Microsecond
	}
	if max <= 0 {
		max = 250 * time.Millisecond
	}
	if d <= 0 {
		return min(first, max)
	}
	return min(2*d, max)
}

func (p Poll) config() config { return config{poll: p, cost: 1} }

// Notify waits on wake-ups (pidfds on Linux, and fsnotify on the folders
// of the pidfiles whose holder has no pidfd) and re-tests a lock at each,
// with Poll underneath for what they cannot see. If fsnotify cannot be set
// up, it falls back to Poll alone.
type Notify struct {
	// Poll is the polling that stays underneath; its zero value means
	// Poll{First: 10ms, Max: 1s}.
	Poll Poll
}

// A kept target costs its pidfile and its pidfd.
func (n Notify) config() config {
	p := n.Poll
	if p == (Poll{}) {
		p = Poll{First: 10 * time.Millisecond, Max: time.Second}
	}
	return config{poll: p, fs: true, burst: true, cost: 2}
}

// Default is the strategy used when none is given: [Poll] with its defaults.
var Default Strategy = Poll{}

// Wait blocks until no process holds the lock on pidfile, or ctx is done.
// An absent pidfile counts as released. A nil strategy means [Default].
func Wait(ctx context.Context, pidfile string, s Strategy) error {
	var terr error
	err := WaitAll(ctx, []Target{{Path: pidfile}}, s, func(_ Target, err error) { terr = err })
	if err != nil {
		return err
	}
	return terr
}

// WaitAll blocks until every target is released or ctx is done, calling
// done (from one goroutine at a time) as each target is released, with a
// nil error, or gives up on it with the error that stopped its lock tests.
// It returns ctx's error when ctx ends the wait, and nil otherwise; targets
// not reported through done by then are still held.
//
// WaitAll takes over each target's Handle: it tests the lock on it, hands
// it to done as the Target's Handle (which done may use, not close, until
// it returns) and closes it then, or when WaitAll returns. A Handle counts
// against the descriptor budget as one WaitAll opens would: beyond it, it
// is closed at once and Path is opened for each test. done gets the handle
// WaitAll last tested the lock on, if still open, whether passed in or not.
func WaitAll(ctx context.Context, targets []Target, s Strategy, done func(Target, error)) error {
	if s == nil {
		s = Default
	}
	c := s.config()
	// The handles passed in are open already, so DescriptorBudget counted
	// them as used: add them back, they are what they would cost here.
	given := 0
	for _, t := range targets {
		if t.Handle != nil {
			given++
		}
		if t.Pidfd != nil {
			given++
		}
	}
	budget := DescriptorBudget() + given
	r := &run{done: done, keep: budget / c.cost,
		// Closes off this goroutine only where the descriptors they hold
		// a moment longer cannot starve a test (or done) of one.
		asyncClose: budget >= (len(targets)+1)*c.cost+closers}
	defer r.closeAll()
	defer r.stop()
	ts := slices.Clone(targets)
	for i := r.keep; i < len(ts); i++ {
		// No descriptor to keep for it: opened at each test.
		if ts[i].Handle != nil {
			ts[i].Handle.Close()
		}
		if ts[i].Pidfd != nil {
			ts[i].Pidfd.Close()
		}
		ts[i].Handle, ts[i].Pidfd = nil, nil
	}
	if c.fs && len(ts) > r.keep {
		// Targets beyond the descriptor budget have no pidfd to wake
		// them: a slow poll would leave them to that alone.
		c.poll.First, c.poll.Max = min(c.poll.First, 10*time.Millisecond), min(c.poll.Max, time.Second)
	}
	// The pidfds have what the kept pidfiles leave.
	c.pidfds = budget - min(r.keep, len(ts))
	return r.wait(ctx, ts, nil, c)
}

// WaitEach is [WaitAll] for targets that arrive on in one at a time, as a
// caller signals its nodes: each is waited for from the moment it arrives,
// so a node that dies while the others are still being signalled is
// reported (done) then, and the wait ends soon after the last node does.
// It returns once in is closed and every target that came is over.
//
// When ctx is done first, it returns ctx's error and the targets that came
// and are not over, each with its Handle and Pidfd still open (or nil),
// for the caller to close or to wait on again (a SIGKILL round, say);
// targets still in in are left there, for the caller too.
//
// Handles are taken over as by WaitAll. A target without one is opened
// for each lock test, not kept. On Linux each target's holder is watched
// through its Pidfd, or through a pidfd opened for it, for as many as half
// the descriptors free when WaitEach begins (the other half is left to the
// handles the caller opens meanwhile). With [Notify], a target whose
// holder has no pidfd is watched through fsnotify on its folder as well;
// when every holder has a pidfd, no inotify instance is made.
func WaitEach(ctx context.Context, in <-chan Target, s Strategy, done func(Target, error)) ([]Target, error) {
	if s == nil {
		s = Default
	}
	c := s.config()
	budget := DescriptorBudget()
	c.pidfds = budget / 2
	c.idle = true
	// Closing finished targets' handles off this goroutine holds up to
	// closers+1 descriptors a moment longer: only with plenty to spare
	// (the caller and the pidfds share the budget, and a target beyond
	// it is opened for each test).
	r := &run{done: done, asyncClose: budget >= 8*closers}
	defer r.closeAll()
	defer r.stop()
	if err := r.wait(ctx, nil, in, c); err != nil {
		return r.handBack(), err
	}
	return nil, nil
}
