package multi

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
	"golang.org/x/sys/unix"
)

// maxSignal is SIGRTMAX on Linux.
const maxSignal = 64

// pidfdSignalProcessGroup is PIDFD_SIGNAL_PROCESS_GROUP (Linux 6.9): signal
// the process group led by the pidfd's process.
const pidfdSignalProcessGroup = 1 << 2

// sendPinned pins pid with a pidfd (pidfd_open(2)), checks that the lock on
// h is still held by pid, and signals through the pidfd
// (pidfd_send_signal(2)). Once the pidfd is open, the process it names
// cannot be confused with another even if it dies, so a holder seen after
// the open is the pinned process or the signal goes nowhere. It reports
// false when the holder changed, so that the caller looks again. With
// cont, SIGCONT follows sig the same way.
//
// With group it signals the process group the pinned holder leads
// (PIDFD_SIGNAL_PROCESS_GROUP), once it has checked that the holder leads
// its own group; kernels before 6.9 refuse that flag, and then kill(-pid)
// follows the checks, with the leader pinned and seen alive just before.
func sendPinned(h *pidfile.Handle, pid int, sig syscall.Signal, cont, group bool) (bool, error) {
	pfd, err := unix.PidfdOpen(pid, 0)
	switch err {
	case nil:
	case unix.ESRCH:
		return false, nil // gone already: the lock says what next
	case unix.ENOSYS, unix.EPERM, unix.EINVAL:
		// No pidfds here (old kernel, seccomp): the checked kill is all
		// there is.
		return true, killUnpinned(pid, sig, cont, group)
	default:
		return false, err
	}
	defer unix.Close(pfd)
	state, now, err := h.Holder()
	if err != nil {
		return false, err
	}
	if state != pidfile.Running || now != pid {
		return false, nil
	}
	flags := 0
	if group {
		if err := checkGroupLeader(pid); err != nil {
			return true, err
		}
		flags = pidfdSignalProcessGroup
	}
	err = unix.PidfdSendSignal(pfd, sig, nil, flags)
	if group && err == unix.EINVAL {
		// No PIDFD_SIGNAL_PROCESS_GROUP: is the pinned leader still there?
		if err := unix.PidfdSendSignal(pfd, 0, nil, 0); err == unix.ESRCH {
			return true, nil
		}
		if err := killGroupChecked(pid, sig); err != nil || !cont {
			return true, err
		}
		return true, killGroupChecked(pid, unix.SIGCONT)
	}
	if err == nil && cont {
		err = unix.PidfdSendSignal(pfd, unix.SIGCONT, nil, flags)
	}
	if err != nil && err != unix.ESRCH {
		return true, err
	}
	return true, nil
}

// signalLost sends sig to the lost process st (see [LostError]) and
// reports whether it did. It pins the pid with a pidfd first and checks
// its start time after that, so that the process signalled is the one
// checked: a pid recycled before the open fails the check, and after the
// open the pidfd names the checked process or nothing. It says false when
// the process is gone or the pid now names another process.
func signalLost(st nodes.Started, sig syscall.Signal) (bool, error) {
	if err := checkPID(st.PID); err != nil {
		return false, err
	}
	pfd, err := unix.PidfdOpen(st.PID, 0)
	switch err {
	case nil:
	case unix.ESRCH:
		return false, nil
	case unix.ENOSYS, unix.EPERM, unix.EINVAL:
		return false, errNoPidfd
	default:
		return false, err
	}
	defer unix.Close(pfd)
	if p, err := nodes.ReadProc(st.PID); err != nil || p.Gone() || p.StartTicks != st.StartTicks {
		return false, nil
	}
	if err := unix.PidfdSendSignal(pfd, sig, nil, 0); err != nil {
		if err == unix.ESRCH {
			return false, nil
		}
		return false, fmt.Errorf("signal %s to lost pid %d: %w", SignalName(sig), st.PID, err)
	}
	return true, nil
}

// waitLost waits until the lost process st has exited (a zombie has), or
// ctx is done. It waits on a pidfd, in Go's network poller.
func waitLost(ctx context.Context, st nodes.Started) error {
	pfd, err := unix.PidfdOpen(st.PID, unix.PIDFD_NONBLOCK)
	if err == unix.ESRCH {
		return nil
	}
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(pfd), "pidfd")
	defer f.Close()
	if p, err := nodes.ReadProc(st.PID); err != nil || p.Gone() || p.StartTicks != st.StartTicks {
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
