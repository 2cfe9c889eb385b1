package waiter

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watchFolders watches the folder of every target and sends a target's
// index on wake whenever something happens to its pidfile's name: created,
// written, removed, renamed or chmodded. It signals overflow when events
// were lost, so that the caller tests every lock. If fsnotify cannot be
// used here, it watches nothing and the caller's polling carries on alone.
func watchFolders(ctx context.Context, targets []Target, wake chan<- int, overflow chan<- struct{}) (stop func()) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return func() {}
	}
	byName := make(map[string][]int, len(targets))
	dirs := map[string]bool{}
	for i, t := range targets {
		p := filepath.Clean(t.Path)
		byName[p] = append(byName[p], i)
		if d := filepath.Dir(p); !dirs[d] {
			dirs[d] = true
			_ = w.Add(d) // a folder that cannot be watched is polled
		}
	}
	signalOverflow := func() {
		select {
		case overflow <- struct{}{}:
		default:
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				for _, i := range byName[filepath.Clean(ev.Name)] {
					select {
					case wake <- i:
					default:
						signalOverflow()
					}
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				if errors.Is(err, fsnotify.ErrEventOverflow) {
					signalOverflow()
				}
			}
		}
	}()
	return func() {
		// The caller has cancelled ctx, so the loop above ends without
		// Close. Closing an inotify instance can block for milliseconds
		// in the kernel, longer than the whole wait often takes: it is
		// done in the background.
		wg.Wait()
		go w.Close()
	}
}

// After a wake-up that finds the lock still held, Notify looks again after
// burstFirst, doubling up to burstMax.
const (
	burstFirst = 100 * time.Microsecond
	burstMax   = 10 * time.Millisecond
)

// Notify waits on wake-ups (fsnotify on the pidfiles' folders, and pidfds on
// Linux) and re-tests a lock at each, with Poll underneath for what they
// cannot see. If fsnotify cannot be set up, it falls back to Poll alone.
type Notify struct {
	// Poll is the polling that stays underneath; its zero value means
	// Poll{First: 10ms, Max: 1s}.
	Poll Poll
}

// A kept target costs its pidfile and its pidfd.
func (Notify) fdsPerTarget() int { return 2 }

func (n Notify) wait(ctx context.Context, r *run) error {
	p := n.Poll
	if p == (Poll{}) {
		p = Poll{First: 10 * time.Millisecond, Max: time.Second}
	}
	if r.kept < r.pending {
		// Targets beyond the descriptor budget have no pidfd to wake
		// them: a slow poll would leave them to that alone.
		p.First, p.Max = min(p.First, 10*time.Millisecond), min(p.Max, time.Second)
	}
	ctx, cancel := context.WithCancel(ctx)
	wake := make(chan int, len(r.targets))
	overflow := make(chan struct{}, 1)
	stopFS := watchFolders(ctx, r.targets, wake, overflow)
	stopPidfds := watchPidfds(ctx, r.keptPIDs(), wake)
	defer func() {
		cancel() // first: no watcher may stay blocked sending a wake-up
		stopPidfds()
		stopFS()
	}()

	r.round()
	d := p.next(0)
	timer := time.NewTimer(d)
	defer timer.Stop()
	burstTimer := time.NewTimer(time.Hour)
	burstTimer.Stop()
	defer burstTimer.Stop()
	var burst time.Duration
	recheck := map[int]bool{}
	for r.pending > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case i := <-wake:
			r.probe(i)
			if !r.over[i] {
				// A node unlinks its pidfile just before it exits and lets
				// go of the lock, so the event comes a moment early: look
				// again soon, a few times, before leaving it to the poll.
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
