package waiter

import (
	"context"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// watchPidfds sends i on wake when process pids[i] exits, seen through a
// pidfd (pidfd_open(2), Linux 5.3) that becomes readable at exit, zombie or
// not. The pidfds sit in Go's network poller,
// so a thousand of them cost parked goroutines, not threads. A pid that
// cannot be opened (gone already, or an old kernel) just gets no wake-up:
// the lock tests decide, this only hurries them.
func watchPidfds(ctx context.Context, pids []int, wake chan<- int) (stop func()) {
	w := newPidfdWatcher(ctx, wake, len(pids))
	for i, pid := range pids {
		w.add(i, pid)
	}
	return w.stop
}

// A pidfdWatcher sends i on wake when the process added as i exits.
type pidfdWatcher struct {
	ctx   context.Context
	wake  chan<- int
	left  int // how many more pidfds it may open
	wg    sync.WaitGroup
	files []*os.File
}

func newPidfdWatcher(ctx context.Context, wake chan<- int, max int) *pidfdWatcher {
	return &pidfdWatcher{ctx: ctx, wake: wake, left: max}
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
	f := os.NewFile(uintptr(fd), "pidfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return false
	}
	w.left--
	w.files = append(w.files, f)
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
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

// stop ends the watches, once ctx is done, and closes the pidfds.
func (w *pidfdWatcher) stop() {
	for _, f := range w.files {
		f.SetReadDeadline(time.Now())
	}
	w.wg.Wait()
	for _, f := range w.files {
		f.Close()
	}
}
