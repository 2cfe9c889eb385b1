package waiter

import (
	"context"
	"time"
)

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

// delays returns the backoff sequence as a function of the try number.
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

func (Poll) fdsPerTarget() int { return 1 }

func (p Poll) wait(ctx context.Context, r *run) error {
	r.round()
	if r.pending == 0 {
		return nil
	}
	// A holder's exit wakes its target at once through a pidfd (Linux),
	// so the wait ends when the last node does, not at the next round;
	// the lock test still decides, and the rounds stay underneath for a
	// holder that lets go of its lock without exiting and for targets
	// without a pidfd.
	ctx, cancel := context.WithCancel(ctx)
	wake := make(chan int, len(r.targets))
	w := newPidfdWatcher(ctx, wake, DescriptorBudget())
	r.watchPidfds(w)
	defer func() {
		cancel() // first: no watcher may stay blocked sending a wake-up
		w.stop()
	}()
	d := p.next(0)
	timer := time.NewTimer(d)
	defer timer.Stop()
	for r.pending > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case i := <-wake:
			r.probe(i)
		case <-timer.C:
			r.round()
			d = p.next(d)
			timer.Reset(d)
		}
	}
	return nil
}
