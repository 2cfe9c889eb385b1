package waiter

import (
	"context"
	"time"
)

// config is a [Strategy] as the one wait loop (run.wait) sees it, and what
// WaitAll and WaitEach set for their callers.
type config struct {
	poll  Poll // the rounds of lock tests underneath the wake-ups
	fs    bool // fsnotify on the folders of targets without a pidfd
	burst bool // look again soon after a wake-up that found the lock held
	cost  int  // descriptors a kept target costs: its pidfile, its pidfd
	// pidfds bounds the pidfds the wait opens (Linux).
	pidfds int
	// idle: once the last target has come and every one has a pidfd to
	// wake it, the rounds start at Max and back off to pidfdRoundMax
	// (WaitEach, whose targets come as they are signalled).
	idle bool
}

// pidfdRoundMax is how far the rounds back off when every pending target
// has a pidfd to wake it: they are there only for a holder that lets go of
// its lock without exiting.
const pidfdRoundMax = time.Second

// After a wake-up that finds the lock still held, a bursting wait looks
// again after burstFirst, doubling up to burstMax.
const (
	burstFirst = 100 * time.Microsecond
	burstMax   = 10 * time.Millisecond
)

// wait is the one wait loop: it tests the lock of each target of r (those
// r has, then each that comes on in, nil for none), watches its holder
// through a pidfd (Linux), within c.pidfds, and, with c.fs, a target whose
// holder has none through fsnotify on its folder; then it tests a lock
// again at each wake-up and every target's at each round, until in is
// closed and every target is over, or ctx is done (its error returned).
// The caller calls r.stop once done with the pidfds (r.handBack).
//
// A holder's exit wakes its target at once through its pidfd, so the wait
// ends when the last node does, not at the next round; the lock test
// still decides, and the rounds stay underneath for a holder that lets go
// of its lock without exiting and for targets without a pidfd. No inotify
// instance is made while every holder has a pidfd: closing one blocks the
// command's exit.
func (r *run) wait(ctx context.Context, in <-chan Target, c config) error {
	ctx, r.cancel = context.WithCancel(ctx)
	wake := make(chan int, max(64, len(r.targets)))
	overflow := make(chan struct{}, 1)
	r.w = newPidfdWatcher(ctx, wake, c.pidfds)
	unwatched := 0 // targets that came without a pidfd watch
	admit := func(i int, open bool) {
		r.probe(i)
		if r.over[i] || r.watch(i, open) {
			return
		}
		r.probe(i) // gone before its pidfd could be had?
		if r.over[i] {
			return
		}
		unwatched++
		if c.fs {
			if r.fw == nil {
				r.fw = newFolderWatcher(ctx, wake, overflow)
			}
			r.fw.add(i, r.targets[i].Path)
		}
	}
	for i := range r.targets {
		if !r.over[i] {
			// Targets beyond the descriptor budget have no kept handle,
			// and get no pidfd either.
			admit(i, r.hs[i] != nil)
		}
	}
	p := c.poll
	d := p.next(0)
	if in != nil {
		// The rounds start when the last target has come: before, the
		// pidfds carry the wait and a slow round catches what they
		// cannot see.
		d = p.next(time.Hour)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	var b burster
	if c.burst {
		b.init()
		defer b.timer.Stop()
	}
	for in != nil || r.pending > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case t, more := <-in:
			if more {
				admit(r.add(t), true)
				continue
			}
			in = nil
			d = p.next(0)
			if c.idle && unwatched == 0 {
				// Every holder wakes its target at its exit: the rounds
				// are for a lock let go without one.
				p.Max = max(p.Max, pidfdRoundMax)
				d = p.Max
			}
			timer.Reset(d)
		case i := <-wake:
			r.probe(i)
			if c.burst && !r.over[i] {
				// A node unlinks its pidfile just before it exits and
				// lets go of the lock, so the event comes a moment early:
				// look again soon, a few times, before leaving it to the
				// rounds.
				b.add(i)
			}
		case <-b.C():
			b.fire(r)
		case <-overflow:
			r.round()
		case <-timer.C:
			r.round()
			d = p.next(d)
			timer.Reset(d)
		}
	}
	return nil
}

// A burster looks again, soon and a few times, at targets whose wake-up
// found the lock still held: a node unlinks its pidfile just before it
// exits and lets go of the lock, so the event comes a moment early.
type burster struct {
	timer   *time.Timer
	d       time.Duration
	recheck map[int]bool
}

func (b *burster) init() {
	b.timer = time.NewTimer(time.Hour)
	b.timer.Stop()
	b.recheck = map[int]bool{}
}

// C is the timer's channel, nil (never ready) for a burster not in use.
func (b *burster) C() <-chan time.Time {
	if b.timer == nil {
		return nil
	}
	return b.timer.C
}

func (b *burster) add(i int) {
	b.recheck[i] = true
	if b.d == 0 {
		b.d = burstFirst
		b.timer.Reset(b.d)
	}
}

func (b *burster) fire(r *run) {
	for i := range b.recheck {
		r.probe(i)
		if r.over[i] {
			delete(b.recheck, i)
		}
	}
	if b.d *= 2; b.d > burstMax || len(b.recheck) == 0 {
		b.d = 0
		clear(b.recheck)
	} else {
		b.timer.Reset(b.d)
	}
}
