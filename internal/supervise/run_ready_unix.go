//go:build unix

package supervise

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// checkReady signals readiness once every node runs.
func (r *run) checkReady() {
	if r.ready || r.stopping {
		return
	}
	for _, rn := range r.nodes {
		if rn.pid <= 0 {
			return
		}
	}
	r.ready = true
	r.makeReady()
	r.notify("READY=1")
	r.logf("every node holds its lock (and passed its readiness check): ready")
}

// startAll starts every node (Host.StartAll). With readiness checks
// (--ready), which the start waits for, a stop signal meanwhile ends
// those waits at once and is acted on before the outcomes, so that a
// node slow to be ready never delays a stop.
func (r *run) startAll(ctx context.Context) []Outcome {
	waits := false
	for _, rn := range r.nodes {
		waits = waits || rn.n.Ready.Kind != ""
	}
	if !waits {
		return r.h.StartAll(ctx, r.rp)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var held os.Signal
	done, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case held = <-r.stops:
			cancel()
		case <-done:
		}
	}()
	outs := r.h.StartAll(sctx, r.rp)
	close(done)
	<-watched
	if held != nil {
		r.signal(held.(syscall.Signal))
	}
	return outs
}

// recheckReady withdraws the run's readiness while a node that exited
// on its own is down (being restarted, or fatal): the ready file is
// removed and the notify socket told (STATUS=); it is given back once
// every such node runs (and is ready) again. A node stopped on purpose
// from another shell does not count. Called by the loop after each
// event.
func (r *run) recheckReady() {
	if !r.ready || r.stopping {
		return
	}
	var down []string
	for _, rn := range r.nodes {
		if rn.pid <= 0 && (rn.starting || rn.fatal) {
			down = append(down, rn.n.Name)
		}
	}
	switch {
	case len(down) > 0 && !r.withdrawn:
		r.withdrawn = true
		r.removeReady()
		r.notify("STATUS=not ready: " + strings.Join(down, " "))
		r.logf("not ready while %s is down: ready withdrawn", strings.Join(down, ", "))
	case len(down) == 0 && r.withdrawn:
		r.withdrawn = false
		r.makeReady()
		r.notify("READY=1\nSTATUS=every node is ready")
		r.logf("every node is ready again")
	}
}

// notifyTimeout bounds each send to the notify socket: a reader that
// does not read (its queue full) costs the run no more than this.
const notifyTimeout = 500 * time.Millisecond

// notify queues a state for the notify socket (sd_notify(3)), if there is
// one. The sends are made in order by a goroutine of their own, never by
// the loop, so that a socket that blocks cannot delay acting on a TERM.
func (r *run) notify(state string) {
	if r.notifyAddr == "" {
		return
	}
	if r.notifyq == nil {
		r.notifyq, r.notified = make(chan string, 4), make(chan struct{})
		go func() {
			defer close(r.notified)
			for state := range r.notifyq {
				if err := sdNotify(r.notifyAddr, state, notifyTimeout); err != nil {
					r.logf("notify socket %s: %s: %v", r.notifyAddr, state, err)
				}
			}
		}()
	}
	select {
	case r.notifyq <- state:
	default:
		r.logf("notify socket %s: %s dropped: the socket takes nothing", r.notifyAddr, state)
	}
}

// endNotify lets the last states go out, each within its deadline.
func (r *run) endNotify() {
	if r.notifyq != nil {
		close(r.notifyq)
		<-r.notified
	}
}

// sdNotify sends one datagram to the unix socket addr, giving up after
// timeout; a name starting with '@' is in the abstract namespace
// (unix.SockaddrUnix maps it). The socket is non-blocking: a full queue
// at the reader is waited out with poll, up to the deadline.
//
// Raw system calls, not package net: net links the cgo resolver, which
// makes the binary dynamic, and every exec step (one per node started)
// would then pay for ld.so and glibc's start-up, about a third of its
// CPU on this machine (docs/benchmarks.md).
func sdNotify(addr, state string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	// Not every Unix has SOCK_CLOEXEC: under ForkLock, as package net
	// does there, no node started meanwhile inherits the socket.
	syscall.ForkLock.RLock()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
	if err == nil {
		unix.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		return err
	}
	// Connected, poll says when the reader's queue has room again.
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: addr}); err != nil {
		return err
	}
	for {
		_, err := unix.Write(fd, []byte(state))
		if err != unix.EAGAIN && err != unix.EINTR {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("not sent within %s: its reader does not read", timeout)
		}
		// At most 50ms at a time: where poll does not watch the reader's
		// queue, the send is tried again.
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		unix.Poll(pfd, int(min(left, 50*time.Millisecond)/time.Millisecond)+1)
	}
}
