package waiter

import (
	"errors"
	"io/fs"
	"os"
	"sync"

	"github.com/multi-launcher/multi/nodes/pidfile"
)

// run is the state of one WaitAll or WaitEach call.
type run struct {
	targets []Target
	hs      []*pidfile.Handle
	over    []bool
	pids    []int // the holder each target waits for, where known
	// given holds the pidfds the targets came with, until watched.
	given   []*os.File
	w       *pidfdWatcher  // nil until the wait begins
	fw      *folderWatcher // nil until a target needs fsnotify
	cancel  func()         // ends the watchers' context
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
			r.keep = min(r.keep, r.kept) // the budget was too hopeful
			return                       // tested again at the next round
		case err != nil:
			r.pending--
			r.finish(i, err, nil)
			return
		}
	}
	state, pid, err := h.Holder()
	held, exited := false, false
	switch {
	case err != nil:
	case state == pidfile.Running && (r.targets[i].PID <= 0 || pid == r.targets[i].PID),
		state == pidfile.Elsewhere && r.targets[i].PID <= 0:
		held = true
	default:
		held, exited = r.lives(i)
	}
	if held {
		if r.pids[i] <= 0 && state == pidfile.Running {
			// Waiting for whoever holds it now: that is the process
			// whose exit may end the wait.
			r.pids[i] = pid
		}
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
	if err == nil && r.w != nil && !exited {
		r.w.settle(i, r.given[i])
	}
	r.pending--
	r.finish(i, err, h)
}

// lives reports whether target i awaits its holder's exit
// ([Target.AwaitExit]) and that holder, which has let go of the lock,
// has not exited yet, as its pidfd says. The pidfd is then watched, so
// that the exit wakes the target. exited says the pidfd said the holder
// has exited (nothing left to settle).
func (r *run) lives(i int) (alive, exited bool) {
	if !r.targets[i].AwaitExit {
		return false, false
	}
	f := r.given[i]
	if f == nil && r.w != nil {
		f = r.w.pidfd(i)
	}
	if f == nil {
		return false, false
	}
	if pidfdExited(f) {
		return false, true
	}
	if r.given[i] != nil && r.w != nil {
		r.watch(i, false)
	}
	return true, false
}

// watch watches target i's holder through the pidfd it came with or, with
// open, one opened for it, and reports whether it does. A holder watched
// already (lives adopted its pidfd) keeps that one.
func (r *run) watch(i int, open bool) bool {
	if r.w.pidfd(i) != nil {
		return true
	}
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
// its lock was last tested on), and then closes h, unless the target
// keeps it ([Target.KeepHandle]).
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
		if t.KeepHandle {
			return // done's to close
		}
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

// handBack returns the targets not over, with their handles and pidfds,
// which r no longer closes. The wait must be over (ctx done).
func (r *run) handBack() []Target {
	var left []Target
	for i, t := range r.targets {
		if r.over[i] {
			continue
		}
		t.Handle, r.hs[i] = r.hs[i], nil
		t.Pidfd = r.given[i]
		r.given[i] = nil
		if f := r.w.release(i); f != nil {
			t.Pidfd = f
		}
		left = append(left, t)
	}
	return left
}

// add makes t target number i of r, keeping its handle and pidfd if it has
// them, and returns i.
func (r *run) add(t Target) int {
	r.targets = append(r.targets, t)
	r.hs = append(r.hs, t.Handle)
	r.over = append(r.over, false)
	r.pids = append(r.pids, t.PID)
	r.given = append(r.given, t.Pidfd)
	r.pending++
	if t.Handle != nil {
		r.kept++
	}
	return len(r.targets) - 1
}

// stop ends the wait's watchers, if it made any: cancelling their context
// first, so that none stays blocked sending a wake-up, then the pidfds'
// epoll instance and the fsnotify watch.
func (r *run) stop() {
	if r.cancel != nil {
		r.cancel()
	}
	if r.w != nil {
		r.w.stop()
	}
	if r.fw != nil {
		r.fw.stop()
	}
}
