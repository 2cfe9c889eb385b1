package waiter

import (
	"context"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// A pidfdWatcher sends i on wake when the process watched as i exits, seen
// through a pidfd (pidfd_open(2), Linux 5.3) that becomes readable at exit,
// zombie or not. All its pidfds are in one epoll instance of its own,
// waited on by one goroutine: a thousand watched processes cost a
// thousand descriptors and one blocked thread, no goroutine each. A pid
// that cannot be opened (gone already, or an old kernel) just gets no
// wake-up: the lock tests decide, this only hurries them.
//
// add, adopt, drop and release are called from one goroutine (the wait's).
type pidfdWatcher struct {
	ctx   context.Context
	wake  chan<- int
	left  int // how many more pidfds it may open
	byI   map[int]*os.File
	epfd  int // -1 until the first watch, or if epoll cannot be had
	evfd  int // an eventfd in the epoll set: written to stop the loop
	loopw sync.WaitGroup
}

// stopMark is the epoll data of the eventfd, never a target's index.
const stopMark = -1

func newPidfdWatcher(ctx context.Context, wake chan<- int, max int) *pidfdWatcher {
	return &pidfdWatcher{ctx: ctx, wake: wake, left: max, byI: map[int]*os.File{}, epfd: -1, evfd: -1}
}

// start makes the epoll instance and its goroutine, at the first watch.
func (w *pidfdWatcher) start() bool {
	if w.epfd >= 0 {
		return true
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return false
	}
	evfd, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return false
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: stopMark}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, evfd, &ev); err != nil {
		unix.Close(evfd)
		unix.Close(epfd)
		return false
	}
	w.epfd, w.evfd = epfd, evfd
	w.loopw.Add(1)
	go w.loop()
	return true
}

// loop sends the index of each pidfd that becomes readable, once (the
// watch is one-shot), until the eventfd is written.
func (w *pidfdWatcher) loop() {
	defer w.loopw.Done()
	events := make([]unix.EpollEvent, 64)
	for {
		n, err := unix.EpollWait(w.epfd, events, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return
		}
		for _, ev := range events[:n] {
			if ev.Fd == stopMark {
				return
			}
			select {
			case w.wake <- int(ev.Fd):
			case <-w.ctx.Done():
			}
		}
	}
}

// add watches pid as i and reports whether it could: not for a pid <= 1,
// one already reaped, beyond its budget or without pidfds.
func (w *pidfdWatcher) add(i, pid int) bool {
	if pid <= 1 || w.left <= 0 || !w.start() {
		return false
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return false
	}
	return w.adopt(i, os.NewFile(uintptr(fd), "pidfd"))
}

// adopt watches f, a pidfd (a caller's: see [Target.Pidfd]), as i, and
// reports whether it could. It takes f over either way: it closes f when
// it cannot watch it. A watched pidfd counts against the budget add opens
// within, the caller's too: the caller opened it instead of the pidfd add
// would have, with the descriptors the two share.
func (w *pidfdWatcher) adopt(i int, f *os.File) bool {
	if !w.start() {
		f.Close()
		return false
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLONESHOT, Fd: int32(i)}
	if err := unix.EpollCtl(w.epfd, unix.EPOLL_CTL_ADD, int(f.Fd()), &ev); err != nil {
		f.Close()
		return false
	}
	w.byI[i] = f
	w.left--
	return true
}

// drop ends the watch of i, if any, and closes its pidfd: target i is over.
func (w *pidfdWatcher) drop(i int) {
	if f := w.byI[i]; f != nil {
		delete(w.byI, i)
		f.Close() // which takes it out of the epoll set
	}
}

// release ends the watch of i and returns its pidfd, still open, for the
// caller (nil if i had none).
func (w *pidfdWatcher) release(i int) *os.File {
	f := w.byI[i]
	if f == nil {
		return nil
	}
	delete(w.byI, i)
	unix.EpollCtl(w.epfd, unix.EPOLL_CTL_DEL, int(f.Fd()), nil)
	return f
}

// watching reports whether i has a pidfd watched.
func (w *pidfdWatcher) watching(i int) bool { return w.byI[i] != nil }

// stop ends the watches, once ctx is done, and closes the pidfds.
func (w *pidfdWatcher) stop() {
	if w.epfd < 0 {
		return
	}
	var one = [8]byte{1}
	unix.Write(w.evfd, one[:])
	w.loopw.Wait()
	for i, f := range w.byI {
		f.Close()
		delete(w.byI, i)
	}
	unix.Close(w.evfd)
	unix.Close(w.epfd)
	w.epfd, w.evfd = -1, -1
}
