package pin

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/nodes"
)

// SignalLost sends sig to the lost process st (see [LostError]) and
// reports whether it did. It pins the pid with a pidfd first and checks
// its start time after that, so that the process signalled is the one
// checked: a pid recycled before the open fails the check, and after the
// open the pidfd names the checked process or nothing. It says false when
// the process is gone or the pid now names another process.
func SignalLost(st nodes.Started, sig syscall.Signal) (bool, error) {
	p, err := CheckPID(st.PID)
	if err != nil {
		return false, err
	}
	ok, err := signalChecked(p, sig, func(pfd int) bool {
		p, err := proc.Read(st.PID)
		return err == nil && !p.Gone() && PinnedIs(pfd, st.PID, st)
	})
	if err != nil && err != ErrNoPidfd {
		return false, fmt.Errorf("signal %s to lost pid %d: %w", SignalName(sig), st.PID, err)
	}
	return ok, err
}

// signalChecked pins p with a pidfd, asks still (given the pidfd) whether
// the pinned process is still the one checked, and only then sends sig
// through the pidfd: a pid recycled before the open fails still, and
// after it the pidfd names the checked process or nothing. It says false
// when the process is gone or fails still; ErrNoPidfd where there are no
// pidfds.
func signalChecked(p SafePID, sig syscall.Signal, still func(pfd int) bool) (bool, error) {
	pfd, err := unix.PidfdOpen(int(p), 0)
	switch err {
	case nil:
	case unix.ESRCH:
		return false, nil
	case unix.ENOSYS, unix.EPERM, unix.EINVAL:
		return false, ErrNoPidfd
	default:
		return false, err
	}
	defer unix.Close(pfd)
	if !still(pfd) {
		return false, nil
	}
	if err := unix.PidfdSendSignal(pfd, sig, nil, 0); err != nil {
		if err == unix.ESRCH {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// PidfdGone reports whether the process of the pidfd f has exited (a
// zombie has): its pidfd is readable then.
func PidfdGone(f *os.File) bool {
	fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if err != unix.EINTR {
			return err != nil || n > 0
		}
	}
}

// WaitLost waits until the lost process st has exited (a zombie has), or
// ctx is done. It waits on a pidfd, in Go's network poller.
func WaitLost(ctx context.Context, st nodes.Started) error {
	pfd, err := unix.PidfdOpen(st.PID, unix.PIDFD_NONBLOCK)
	if err == unix.ESRCH {
		return nil
	}
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(pfd), "pidfd")
	defer f.Close()
	if p, err := proc.Read(st.PID); err != nil || p.Gone() || !PinnedIs(pfd, st.PID, st) {
		return nil // gone before the open: the pid is another's now
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	err = rc.Read(func(fd uintptr) bool {
		// Readable once the process has exited.
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		return err != nil && err != unix.EINTR || n > 0
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	return nil
}
