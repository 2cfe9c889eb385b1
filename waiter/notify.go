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
	fw := newFolderWatcher(ctx, wake, overflow)
	for i, t := range targets {
		fw.add(i, t.Path)
	}
	return fw.stop
}

// A folderWatcher is watchFolders for targets added one at a time.
type folderWatcher struct {
	w        *fsnotify.Watcher // nil if fsnotify cannot be used
	mu       sync.Mutex        // guards byName and dirs
	byName   map[string][]int
	dirs     map[string]bool
	wg       sync.WaitGroup
	wake     chan<- int
	overflow chan<- struct{}
}

func newFolderWatcher(ctx context.Context, wake chan<- int, overflow chan<- struct{}) *folderWatcher {
	fw := &folderWatcher{byName: map[string][]int{}, dirs: map[string]bool{}, wake: wake, overflow: overflow}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fw
	}
	fw.w = w
	fw.wg.Add(1)
	go fw.loop(ctx)
	return fw
}

// add watches target i's pidfile, at path, through its folder.
func (fw *folderWatcher) add(i int, path string) {
	if fw.w == nil {
		return
	}
	p := filepath.Clean(path)
	fw.mu.Lock()
	fw.byName[p] = append(fw.byName[p], i)
	d := filepath.Dir(p)
	watched := fw.dirs[d]
	fw.dirs[d] = true
	fw.mu.Unlock()
	if !watched {
		_ = fw.w.Add(d) // a folder that cannot be watched is polled
	}
}

func (fw *folderWatcher) signalOverflow() {
	select {
	case fw.overflow <- struct{}{}:
	default:
	}
}

func (fw *folderWatcher) loop(ctx context.Context) {
	defer fw.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-fw.w.Events:
			if !ok {
				return
			}
			fw.mu.Lock()
			is := fw.byName[filepath.Clean(ev.Name)]
			fw.mu.Unlock()
			for _, i := range is {
				select {
				case fw.wake <- i:
				default:
					fw.signalOverflow()
				}
			}
		case err, ok := <-fw.w.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				fw.signalOverflow()
			}
		}
	}
}

// stop ends the watch; the caller has cancelled ctx.
func (fw *folderWatcher) stop() {
	if fw.w == nil {
		return
	}
	// The loop above ends without Close. Closing an inotify instance can
	// block for milliseconds in the kernel, longer than the whole wait
	// often takes: it is done in the background.
	fw.wg.Wait()
	go fw.w.Close()
}

// After a wake-up that finds the lock still held, Notify looks again after
// burstFirst, doubling up to burstMax.
const (
	burstFirst = 100 * time.Microsecond
	burstMax   = 10 * time.Millisecond
)

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
func (Notify) fdsPerTarget() int { return 2 }

// slowPoll is the poll that stays underneath.
func (n Notify) slowPoll() Poll {
	if n.Poll == (Poll{}) {
		return Poll{First: 10 * time.Millisecond, Max: time.Second}
	}
	return n.Poll
}

func (n Notify) wait(ctx context.Context, r *run) error {
	p := n.slowPoll()
	if r.kept < r.pending {
		// Targets beyond the descriptor budget have no pidfd to wake
		// them: a slow poll would leave them to that alone.
		p.First, p.Max = min(p.First, 10*time.Millisecond), min(p.Max, time.Second)
	}
	ctx, cancel := context.WithCancel(ctx)
	wake := make(chan int, len(r.targets))
	overflow := make(chan struct{}, 1)
	w := newPidfdWatcher(ctx, wake, DescriptorBudget())
	stopFS := func() {}
	if !r.watchPidfds(w) {
		// Some holder has no pidfd to wake its target: fsnotify then. An
		// inotify instance costs the command its exit (closing one
		// blocks), so none is made when the pidfds cover every target.
		stopFS = watchFolders(ctx, r.targets, wake, overflow)
	}
	defer func() {
		cancel() // first: no watcher may stay blocked sending a wake-up
		w.stop()
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
