package waiter

import (
	"context"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A pidfdWatcher sends i on wake when the process watched as i exits, seen
// through a pidfd (pidfd_open(2), Linux 5.3) that becomes readable at exit,
// zombie or not. All its pidfds are in one epoll instance of its own, and
// that instance sits in Go's poller (an epoll descriptor is readable when
// one of its own is), read by one goroutine: a thousand watched processes
// cost a thousand descriptors and one parked goroutine, no goroutine each
// and no thread. A pid that cannot be opened (gone already, or an old
// kernel) just gets no wake-up: the lock tests decide, this only hurries
// them.
//
// add, adopt, drop and release are called from one goroutine (the wait's).
type pidfdWatcher struct {
	ctx   context.Context
	wake  chan<- int
	left  int // how many more pidfds it may open
	byI   map[int]*os.File
	ep    *os.File // the epoll instance, nil until the first watch
	epfd  int
	loopw sync.WaitGroup
}

func newPidfdWatcher(ctx context.Context, wake chan<- int, max int) *pidfdWatcher {
	return &pidfdWatcher{ctx: ctx, wake: wake, left: max, byI: map[int]*os.File{}}
}

// start makes the epoll instance and its goroutine, at the first watch.
func (w *pidfdWatcher) start() bool {
	if w.ep != nil {
		return true
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return false
	}
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(epfd)
		return false
	}
	ep := os.NewFile(uintptr(epfd), "epoll") // non-blocking: in Go's poller
	rc, err := ep.SyscallConn()
	if err != nil {
		ep.Close()
		return false
	}
	w.ep, w.epfd = ep, epfd
	w.loopw.Add(1)
	go w.loop(rc)
	return true
}

// loop sends the index of each pidfd that becomes readable, once (the
// watch is one-shot), until the epoll instance is closed.
func (w *pidfdWatcher) loop(rc syscall.RawConn) {
	defer w.loopw.Done()
	events := make([]unix.EpollEvent, 64)
	for {
		n := 0
		err := rc.Read(func(fd uintptr) bool {
			var err error
			n, err = unix.EpollWait(int(fd), events, 0)
			return err == nil && n > 0 // else park until it is readable
		})
		if err != nil {
			return
		}
		for _, ev := range events[:n] {
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

// exitGrace bounds how long settle waits for a holder to finish exiting.
const exitGrace = time.Millisecond

// settle is called when the lock of target i is seen released: the
// kernel lets go of a dying process's locks a moment before the process
// has exited (exit_files, then exit_notify), so a wait that ended at the
// lock alone could return while the node is still exiting. If i's holder
// has a pidfd (watched, or given and not yet watched), settle waits for it
// to say the holder has exited, up to exitGrace: a holder that let go of
// its lock and lives on is not waited for longer than that.
func (w *pidfdWatcher) settle(i int, given *os.File) {
	f := w.byI[i]
	if f == nil {
		f = given
	}
	if f == nil {
		return
	}
	fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLIN}}
	ts := unix.NsecToTimespec(int64(exitGrace))
	for {
		if _, err := unix.Ppoll(fds, &ts, nil); err != unix.EINTR {
			return
		}
	}
}

// pidfd returns the pidfd watched as i, or nil.
func (w *pidfdWatcher) pidfd(i int) *os.File { return w.byI[i] }

// pidfdExited reports whether the process of the pidfd f has exited (a
// zombie has): a pidfd is readable from then on.
func pidfdExited(f *os.File) bool {
	fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if err != unix.EINTR {
			return err != nil || n > 0
		}
	}
}

// watching reports whether i has a pidfd watched.
func (w *pidfdWatcher) watching(i int) bool { return w.byI[i] != nil }

// stop ends the watches, once ctx is done, and closes the pidfds.
func (w *pidfdWatcher) stop() {
	if w.ep == nil {
		return
	}
	w.ep.Close() // ends the loop's Read
	w.loopw.Wait()
	for i, f := range w.byI {
		f.Close()
		delete(w.byI, i)
	}
	w.ep = nil
}
