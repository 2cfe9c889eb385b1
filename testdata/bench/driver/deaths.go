//go:build linux

package main

import (
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// A deathWatch timestamps the exits of a set of processes through pidfds:
// a pidfd becomes readable when its process exits (zombie or not). One
// locked thread blocks in epoll_wait and stamps each batch of exits as it
// returns.
type deathWatch struct {
	epfd   int
	fds    map[int32]int // pidfd -> index
	deaths []time.Time   // zero while alive
	early  int           // already gone when the watch began
	done   chan struct{}
	mu     sync.Mutex
	left   int
	stop   chan struct{}
}

func watchDeaths(pids []int) (*deathWatch, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	w := &deathWatch{epfd: epfd, fds: map[int32]int{}, deaths: make([]time.Time, len(pids)),
		done: make(chan struct{}), stop: make(chan struct{})}
	now := time.Now()
	for i, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			w.deaths[i] = now
			w.early++
			continue
		}
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
		if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
			unix.Close(fd)
			w.close()
			return nil, err
		}
		w.fds[int32(fd)] = i
		w.left++
	}
	go w.loop()
	return w, nil
}

func (w *deathWatch) loop() {
	runtime.LockOSThread()
	defer close(w.done)
	events := make([]unix.EpollEvent, 1024)
	for w.left > 0 {
		n, err := unix.EpollWait(w.epfd, events, 50)
		now := time.Now()
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return
		}
		for _, ev := range events[:n] {
			i, ok := w.fds[ev.Fd]
			if !ok {
				continue
			}
			w.deaths[i] = now
			unix.EpollCtl(w.epfd, unix.EPOLL_CTL_DEL, int(ev.Fd), nil)
			unix.Close(int(ev.Fd))
			delete(w.fds, ev.Fd)
			w.left--
		}
		select {
		case <-w.stop:
			return
		default:
		}
	}
}

// wait waits until every process has exited or the timeout passes, and
// returns the last exit time and how many are still alive.
func (w *deathWatch) wait(timeout time.Duration) (last time.Time, alive int) {
	select {
	case <-w.done:
	case <-time.After(timeout):
		close(w.stop)
		<-w.done
	}
	for _, d := range w.deaths {
		if d.IsZero() {
			alive++
		} else if d.After(last) {
			last = d
		}
	}
	return last, alive
}

// aliveAt counts the processes not yet seen dead at t.
func (w *deathWatch) aliveAt(t time.Time) int {
	n := 0
	for _, d := range w.deaths {
		if d.IsZero() || d.After(t) {
			n++
		}
	}
	return n
}

func (w *deathWatch) close() {
	for fd := range w.fds {
		unix.Close(int(fd))
	}
	w.fds = nil
	unix.Close(w.epfd)
}
