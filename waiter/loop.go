package waiter

import (
	"context"
	"time"
)

// config is a [Strategy] as the one wait loop (run.wait) sees it, with
// what WaitAll or WaitEach adds: the pidfd budget, and idle rounds.
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
// again after burstFirst, then after delays doubling up to burstMax.
const (
	burstFirst = 100 * time.Microsecond
	burstMax   = 10 * time.Millisecond
)

// wait is the one wait loop. It admits each target, those of preload and
// then each that comes on in (nil for none): tests its lock, watches its
// holder through a pidfd (Linux) within c.pidfds and, with c.fs, a target
// whose holder has none through fsnotify on its folder. Then it tests a
// lock again at each wake-up and every target's at each round, until in is
// closed and every target is over, or ctx is done (its error returned).
// The caller calls r.stop once done with the pidfds (r.handBack).
//
// A holder's exit wakes its target at once through its pidfd, so the wait
// ends when the last node does, not at the next round; the lock test
// still decides, and the rounds stay underneath for a holder that lets go
// of its lock without exiting and for targets without a pidfd. No inotify
// instance is made while every holder has a pidfd: closing one blocks the
// command's exit.
func (r *run) wait(ctx context.Context, preload []Target, in <-chan Target, c config) error {
	ctx, r.cancel = context.WithCancel(ctx)
	wake := make(chan int, max(64, len(preload)))
	overflow := make(chan struct{}, 1)
	r.w = newPidfdWatcher(ctx, wake, c.pidfds)
	unwatched := 0 // targets that came without a pidfd watch
	admit := func(t Target) {
		i := r.add(t)
		r.probe(i)
		if r.over[i] || r.watch(i, true) {
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
			r.fw.add(i, t.Path)
		}
	}
	for _, t := range preload {
		admit(t)
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
	// After a wake-up that finds the lock still held, a target is tested
	// again soon, a few times (c.burst): a node unlinks its pidfile just
	// before it exits and lets go of the lock, so the event comes a moment
	// early.
	burstTimer := time.NewTimer(time.Hour)
	burstTimer.Stop()
	defer burstTimer.Stop()
	var burst time.Duration
	recheck := map[int]bool{}
	for in != nil || r.pending > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case t, more := <-in:
			if more {
				admit(t)
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
				recheck[i] = true
				if burst == 0 {
					burst = burstFirst
					burstTimer.Reset(burst)
				}
			}
		case <-burstTimer.C:
			for i := range recheck {
				r.probe(i)
				if r.over[i] {
					delete(recheck, i)
				}
			}
			if burst *= 2; burst > burstMax || len(recheck) == 0 {
				burst = 0
				clear(recheck)
			} else {
				burstTimer.Reset(burst)
			}
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
