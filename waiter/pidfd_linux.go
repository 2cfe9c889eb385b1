package waiter

import (
	"context"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// A pidfdWatcher sends i on wake when the process watched as i exits, seen
// through a pidfd (pidfd_open(2), Linux 5.3) that becomes readable at exit,
// zombie or not. The pidfds sit in Go's network poller, so a thousand of
// them cost parked goroutines, not threads. A pid that cannot be opened
// (gone already, or an old kernel) just gets no wake-up: the lock tests
// decide, this only hurries them.
type pidfdWatcher struct {
	ctx  context.Context
	wake chan<- int
	left int // how many more pidfds it may open
	mu   sync.Mutex
	wg   sync.WaitGroup
	byI  map[int]*watch
}

// A watch is one pidfd being watched, and the end of its goroutine.
type watch struct {
	f    *os.File
	over chan struct{}
}

func newPidfdWatcher(ctx context.Context, wake chan<- int, max int) *pidfdWatcher {
	return &pidfdWatcher{ctx: ctx, wake: wake, left: max, byI: map[int]*watch{}}
}

// add watches pid as i and reports whether it could: not for a pid <= 1,
// one already reaped, beyond its budget or without pidfds.
func (w *pidfdWatcher) add(i, pid int) bool {
	if pid <= 1 || w.left <= 0 {
		return false
	}
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return false
	}
	if !w.adopt(i, os.NewFile(uintptr(fd), "pidfd")) {
		return false
	}
	w.left--
	return true
}

// adopt watches f, a pidfd opened with PIDFD_NONBLOCK (a caller's: see
// [Target.Pidfd]), as i, and reports whether it could. It takes f over
// either way: it closes f when it cannot watch it.
func (w *pidfdWatcher) adopt(i int, f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return false
	}
	wt := &watch{f: f, over: make(chan struct{})}
	w.mu.Lock()
	w.byI[i] = wt
	w.mu.Unlock()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer close(wt.over)
		err := rc.Read(func(fd uintptr) bool {
			n, _ := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
			return n > 0
		})
		if err == nil {
			select {
			case w.wake <- i:
			case <-w.ctx.Done():
			}
		}
	}()
	return true
}

// drop ends the watch of i, if any, and closes its pidfd: target i is over.
func (w *pidfdWatcher) drop(i int) {
	w.mu.Lock()
	wt := w.byI[i]
	delete(w.byI, i)
	w.mu.Unlock()
	if wt != nil {
		wt.f.Close() // ends the Read above with an error: no wake-up
	}
}

// release ends the watch of i and returns its pidfd, still open, for the
// caller (nil if i had none). ctx must be done, so that the watch cannot
// be blocked sending a wake-up.
func (w *pidfdWatcher) release(i int) *os.File {
	w.mu.Lock()
	wt := w.byI[i]
	delete(w.byI, i)
	w.mu.Unlock()
	if wt == nil {
		return nil
	}
	wt.f.SetReadDeadline(time.Now())
	<-wt.over
	wt.f.SetReadDeadline(time.Time{})
	return wt.f
}

// watching reports whether i has a pidfd watched.
func (w *pidfdWatcher) watching(i int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.byI[i] != nil
}

// stop ends the watches, once ctx is done, and closes the pidfds.
func (w *pidfdWatcher) stop() {
	w.mu.Lock()
	for _, wt := range w.byI {
		wt.f.SetReadDeadline(time.Now())
	}
	w.mu.Unlock()
	w.wg.Wait()
	w.mu.Lock()
	for i, wt := range w.byI {
		wt.f.Close()
		delete(w.byI, i)
	}
	w.mu.Unlock()
}
