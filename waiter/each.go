package waiter

import (
	"context"
	"time"

	"github.com/multi-launcher/multi/nodes/pidfile"
)

// WaitEach is [WaitAll] for targets that arrive on in one at a time, as a
// caller signals its nodes: each is waited for from the moment it arrives,
// so a node that dies while the others are still being signalled is
// reported (done) then, and the wait ends soon after the last node does.
// It returns once in is closed and every target that came is over, or
// when ctx is done (targets still in in are then left there, their
// handles open, for the caller).
//
// Handles are taken over as by WaitAll. A target without one is opened
// for each lock test, not kept. With [Poll], each target's holder is
// watched through a pidfd, for as many as half the descriptors free when
// WaitEach begins (the other half is left to the handles the caller opens
// meanwhile). Other strategies gather the targets until in is closed and
// then wait as WaitAll does.
func WaitEach(ctx context.Context, in <-chan Target, s Strategy, done func(Target, error)) error {
	if s == nil {
		s = Default
	}
	p, ok := s.(Poll)
	if !ok {
		var targets []Target
		for {
			select {
			case <-ctx.Done():
				for _, t := range targets {
					if t.Handle != nil {
						t.Handle.Close()
					}
				}
				return ctx.Err()
			case t, more := <-in:
				if more {
					targets = append(targets, t)
					continue
				}
				return WaitAll(ctx, targets, s, done)
			}
		}
	}
	return p.each(ctx, in, done)
}

// each is WaitEach with Poll.
func (p Poll) each(ctx context.Context, in <-chan Target, done func(Target, error)) error {
	r := &run{done: done}
	defer r.closeAll()
	ctx, cancel := context.WithCancel(ctx)
	wake := make(chan int, 64)
	w := newPidfdWatcher(ctx, wake, DescriptorBudget()/2)
	defer func() {
		cancel() // first: no watcher may stay blocked sending a wake-up
		w.stop()
	}()
	// The rounds start when the last target has come: before, the pidfds
	// carry the wait and a slow round catches what they cannot see.
	d := p.next(time.Hour)
	timer := time.NewTimer(d)
	defer timer.Stop()
	for in != nil || r.pending > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case t, more := <-in:
			if !more {
				in = nil
				d = p.next(0)
				timer.Reset(d)
				continue
			}
			i := r.add(t)
			r.probe(i)
			if !r.over[i] && !w.add(i, r.pids[i]) {
				r.probe(i) // gone before its pidfd could be had?
			}
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

// add makes t target number i of r, keeping its handle if it has one, and
// returns i. A target with a handle but no holder pid waits for the
// holder of now.
func (r *run) add(t Target) int {
	i := len(r.targets)
	r.targets = append(r.targets, t)
	r.hs = append(r.hs, t.Handle)
	r.over = append(r.over, false)
	r.pids = append(r.pids, t.PID)
	r.pending++
	if t.Handle != nil {
		r.kept++
		if t.PID <= 0 {
			if state, pid, err := t.Handle.Holder(); err == nil && state == pidfile.Running {
				r.pids[i] = pid
			}
		}
	}
	return i
}
