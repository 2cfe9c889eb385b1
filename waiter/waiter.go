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
// [Poll], the default, tests every lock with fcntl(F_GETLK): at once, then
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
	"errors"
	"io/fs"
	"os"
	"sync"

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
}

// A Strategy decides how to wait. [Poll] and [Notify] are the two there are.
type Strategy interface {
	wait(ctx context.Context, r *run) error
	// fdsPerTarget is how many descriptors a kept target costs.
	fdsPerTarget() int
	// eachConfig is how [WaitEach] waits with it.
	eachConfig() eachConfig
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
	r := &run{targets: targets, hs: make([]*pidfile.Handle, len(targets)), over: make([]bool, len(targets)),
		pids: make([]int, len(targets)), given: make([]*os.File, len(targets)), done: done,
		keep: budget / s.fdsPerTarget(),
		// Closes off this goroutine only where the descriptors they hold
		// a moment longer cannot starve a test (or done) of one.
		asyncClose: budget >= (len(targets)+1)*s.fdsPerTarget()+closers}
	defer r.closeAll()
	for i, t := range targets {
		r.pids[i] = t.PID
		r.given[i] = t.Pidfd
		if r.kept >= r.keep {
			// No descriptor to keep for it: opened at each test.
			if t.Handle != nil {
				t.Handle.Close()
			}
			if t.Pidfd != nil {
				t.Pidfd.Close()
				r.given[i] = nil
			}
			r.pending++
			continue
		}
		h, err := t.Handle, error(nil)
		if h == nil {
			h, err = pidfile.Open(t.Path)
		}
		if errors.Is(err, fs.ErrNotExist) {
			r.finish(i, nil, nil)
			continue
		}
		if outOfDescriptors(err) {
			r.keep = r.kept // the budget was too hopeful
			r.pending++
			continue
		}
		if err != nil {
			r.finish(i, err, nil)
			continue
		}
		r.hs[i] = h
		r.kept++
		r.pending++
		if t.PID <= 0 {
			// Waiting for whoever holds it now: that is the process whose
			// exit may end the wait.
			if state, pid, err := h.Holder(); err == nil && state == pidfile.Running {
				r.pids[i] = pid
			}
		}
	}
	if r.pending == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.wait(ctx, r)
}

// run is the state of one WaitAll call.
type run struct {
	targets []Target
	hs      []*pidfile.Handle
	over    []bool
	pids    []int // the holder each target waits for, where known
	// given holds the pidfds the targets came with, until watched.
	given   []*os.File
	w       *pidfdWatcher // nil until the wait watches pidfds
	pending int
	done    func(Target, error)
	// keep bounds how many pidfiles stay open between tests (kept).
	keep, kept int
	// closing feeds the goroutines that close finished targets' handles
	// (closeLater), nil until the first.
	closing    chan *pidfile.Handle
	closersWG  sync.WaitGroup
	asyncClose bool
}

// probe tests target i's lock and finishes it when released. A target
// without a kept descriptor is opened for the test, and kept open if it is
// still held and the budget has room again.
func (r *run) probe(i int) {
	if r.over[i] {
		return
	}
	h := r.hs[i]
	if h == nil {
		var err error
		h, err = pidfile.Open(r.targets[i].Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			r.pending--
			r.finish(i, nil, nil)
			return
		case outOfDescriptors(err):
			return // tested again at the next round
		case err != nil:
			r.pending--
			r.finish(i, err, nil)
			return
		}
	}
	state, pid, err := h.Holder()
	held := false
	switch {
	case err != nil:
	case state == pidfile.Running && (r.targets[i].PID <= 0 || pid == r.targets[i].PID),
		state == pidfile.Elsewhere && r.targets[i].PID <= 0:
		held = true
	default:
		held = r.lives(i)
	}
	if held {
		if r.hs[i] == nil {
			if r.kept < r.keep {
				r.hs[i] = h
				r.kept++
			} else {
				h.Close()
			}
		}
		return
	}
	if r.hs[i] != nil {
		r.hs[i] = nil
		r.kept--
	}
	if err == nil && r.w != nil {
		r.w.settle(i, r.given[i])
	}
	r.pending--
	r.finish(i, err, h)
}

// lives reports whether target i awaits its holder's exit
// ([Target.AwaitExit]) and that holder, which has let go of the lock,
// has not exited yet, as its pidfd says. The pidfd is then watched, so
// that the exit wakes the target.
func (r *run) lives(i int) bool {
	if !r.targets[i].AwaitExit {
		return false
	}
	f := r.given[i]
	if f == nil && r.w != nil {
		f = r.w.pidfd(i)
	}
	if f == nil || pidfdExited(f) {
		return false
	}
	if r.given[i] != nil && r.w != nil {
		r.watch(i, false)
	}
	return true
}

// watchPidfds watches, through w, the holder of each pending target with
// a kept descriptor: through the pidfd it came with, or one opened while
// budget (descriptors) lasts. It reports whether every pending target is
// watched.
func (r *run) watchPidfds(w *pidfdWatcher) (all bool) {
	r.w = w
	all = true
	for i := range r.targets {
		if !r.over[i] && !r.watch(i, r.hs[i] != nil) {
			all = false
		}
	}
	return all
}

// watch watches target i's holder through the pidfd it came with or, with
// open, one opened for it, and reports whether it does.
func (r *run) watch(i int, open bool) bool {
	if f := r.given[i]; f != nil {
		r.given[i] = nil
		return r.w.adopt(i, f)
	}
	return open && r.w.add(i, r.pids[i])
}

// round probes every pending target.
func (r *run) round() {
	for i := range r.targets {
		r.probe(i)
	}
}

// finish reports target i over, handing done h (if not nil: the handle
// its lock was last tested on), and then closes h.
func (r *run) finish(i int, err error, h *pidfile.Handle) {
	r.over[i] = true
	if r.w != nil {
		r.w.drop(i)
	}
	if f := r.given[i]; f != nil {
		f.Close()
		r.given[i] = nil
	}
	if r.done != nil {
		t := r.targets[i]
		t.Handle = h
		r.done(t, err)
	}
	if h != nil {
		r.closeLater(h)
	}
}

// closers bounds the handles of finished targets being closed at once.
const closers = 8

// closeLater closes h off the wait's goroutine. The handle of a finished
// target is often the last descriptor of a pidfile done has just unlinked,
// and on a filesystem mounted with discard (ext4 -o discard) that close
// frees the file's block with a synchronous discard: the thread waits for
// the device, which would hold up the test and removal of the next nodes.
// Up to closers such closes wait at once; closeAll waits for them all.
// Without asyncClose (descriptors are short) h is closed here, and so it
// is when no other target is pending: nothing waits behind that close,
// and handing it over (waking a goroutine, perhaps starting a thread)
// would cost the end of the wait more than the close does.
func (r *run) closeLater(h *pidfile.Handle) {
	if !r.asyncClose || r.pending == 0 {
		h.Close()
		return
	}
	if r.closing == nil {
		r.closing = make(chan *pidfile.Handle)
		for range closers {
			r.closersWG.Go(func() {
				for h := range r.closing {
					h.Close()
				}
			})
		}
	}
	r.closing <- h
}

func (r *run) closeAll() {
	if r.closing != nil {
		close(r.closing)
		r.closersWG.Wait()
		r.closing = nil
	}
	for i, h := range r.hs {
		if h != nil {
			h.Close()
			r.hs[i] = nil
		}
	}
	for i, f := range r.given {
		if f != nil {
			f.Close()
			r.given[i] = nil
		}
	}
	r.kept = 0
}
