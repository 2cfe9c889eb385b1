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
	return each(ctx, in, s.eachConfig(), done)
}

// eachConfig is how WaitEach waits with one strategy.
type eachConfig struct {
	poll  Poll // the rounds underneath
	fs    bool // fsnotify on the folders of targets without a pidfd
	burst bool // look again soon after a wake-up that found the lock held
}

func (p Poll) eachConfig() eachConfig { return eachConfig{poll: p} }

func (n Notify) eachConfig() eachConfig {
	return eachConfig{poll: n.slowPoll(), fs: true, burst: true}
}

// pidfdRoundMax is how far the rounds back off when every pending target
// has a pidfd to wake it: they are there only for a holder that lets go of
// its lock without exiting.
const pidfdRoundMax = time.Second

// each is WaitEach.
func each(ctx context.Context, in <-chan Target, c eachConfig, done func(Target, error)) (left []Target, err error) {
	budget := DescriptorBudget()
	// Closing finished targets' handles off this goroutine holds up to
	// closers+1 descriptors a moment longer: only with plenty to spare
	// (the caller and the pidfds share the budget, and a target beyond
	// it is opened for each test).
	r := &run{done: done, asyncClose: budget >= 8*closers}
	defer r.closeAll()
	ctx, cancel := context.WithCancel(ctx)
	wake := make(chan int, 64)
	overflow := make(chan struct{}, 1)
	r.w = newPidfdWatcher(ctx, wake, budget/2)
	var fw *folderWatcher // made for the first target without a pidfd
	unwatched := 0        // targets that came without a pidfd watch
	defer func() {
		cancel() // first: no watcher may stay blocked sending a wake-up
		if err != nil {
			left = r.handBack()
		}
		r.w.stop()
		if fw != nil {
			fw.stop()
		}
	}()
	p := c.poll
	// The rounds start when the last target has come: before, the pidfds
	// carry the wait and a slow round catches what they cannot see.
	d := p.next(time.Hour)
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
			return nil, ctx.Err()
		case t, more := <-in:
			if !more {
				in = nil
				d = p.next(0)
				if unwatched == 0 {
					// Every holder wakes its target at its exit: the
					// rounds are for a lock let go without one.
					p.Max = max(p.Max, pidfdRoundMax)
					d = p.Max
				}
				timer.Reset(d)
				continue
			}
			i := r.add(t)
			r.probe(i)
			if r.over[i] {
				continue
			}
			if !r.watch(i, true) {
				r.probe(i) // gone before its pidfd could be had?
				if r.over[i] {
					continue
				}
				unwatched++
				if c.fs {
					if fw == nil {
						fw = newFolderWatcher(ctx, wake, overflow)
					}
					fw.add(i, t.Path)
				}
			}
		case i := <-wake:
			r.probe(i)
			if c.burst && !r.over[i] {
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
	return nil, nil
}

// handBack returns the targets not over, with their handles and pidfds,
// which r no longer closes. ctx must be done.
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
// them, and returns i. A target with a handle but no holder pid waits for
// the holder of now.
func (r *run) add(t Target) int {
	i := len(r.targets)
	r.targets = append(r.targets, t)
	r.hs = append(r.hs, t.Handle)
	r.over = append(r.over, false)
	r.pids = append(r.pids, t.PID)
	r.given = append(r.given, t.Pidfd)
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
