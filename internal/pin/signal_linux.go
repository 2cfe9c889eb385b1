package pin

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// maxSignal is SIGRTMAX on Linux.
const maxSignal = 64

// pidfdSignalProcessGroup is PIDFD_SIGNAL_PROCESS_GROUP (Linux 6.9): signal
// the process group led by the pidfd's process.
const pidfdSignalProcessGroup = 1 << 2

// sendPinned pins p, the holder the lock on h named (checked once, where
// it was read: see [SafePID]), with a pidfd (pidfd_open(2)), checks that
// the lock is still held by p, and signals through the pidfd
// (pidfd_send_signal(2)). Once the pidfd is open, the process it names
// cannot be confused with another even if it dies, so a holder seen after
// the open is the pinned process or the signal goes nowhere. It reports
// false when the holder changed, so that the caller looks again. With
// cont, SIGCONT follows sig the same way. If pin is not nil and p was
// signalled through the pidfd, *pin gets the pidfd, open, for the caller
// to watch p's exit on or signal p again.
//
// With group it signals the process group the pinned holder leads
// (PIDFD_SIGNAL_PROCESS_GROUP), once it has checked that the holder leads
// its own group ([CheckGroupLeader]); kernels before 6.9 refuse that flag,
// and then kill(-pid) follows, with the leader pinned and seen alive just
// before.
//
// If want names a process (the node's record does), the pinned holder
// must be that process ([PinnedIs]: the pidfd's inode, else pid and start
// time); if not, nothing is signalled and the error is a [*HolderError].
func sendPinned(h *pidfile.Handle, p SafePID, want nodes.Started, sig syscall.Signal, cont, group bool, pin **os.File) (bool, error) {
	pid := int(p)
	pfd, err := unix.PidfdOpen(pid, 0)
	switch err {
	case nil:
	case unix.ESRCH:
		return false, nil // gone already: the lock says what next
	case unix.ENOSYS, unix.EPERM, unix.EINVAL:
		// No pidfds here (old kernel, seccomp): the checked kill is all
		// there is.
		if want.PID != 0 && !ProcIs(pid, want) {
			return true, NewHolderError(pid, want)
		}
		return true, killUnpinned(p, sig, cont, group)
	default:
		return false, err
	}
	kept := false
	defer func() {
		if !kept {
			unix.Close(pfd)
		}
	}()
	state, now, err := h.Holder()
	if err != nil {
		return false, err
	}
	if state != pidfile.Running || now != pid {
		return false, nil
	}
	if want.PID != 0 && !PinnedIs(pfd, pid, want) {
		if unix.PidfdSendSignal(pfd, 0, nil, 0) == unix.ESRCH {
			return false, nil // exited since the lock test: look again
		}
		return true, NewHolderError(pid, want)
	}
	if err := sendOnPidfd(pfd, p, sig, cont, group); err != nil {
		return true, err
	}
	if pin != nil {
		*pin, kept = os.NewFile(uintptr(pfd), "pidfd"), true
	}
	return true, nil
}

// signalPidfd sends sig to p through f, a pidfd that pinned p, as
// sendPinned does once the lock is seen held by p.
func signalPidfd(f *os.File, p SafePID, sig syscall.Signal, cont, group bool) error {
	return sendOnPidfd(int(f.Fd()), p, sig, cont, group)
}

// sendOnPidfd signals p, pinned by pfd, and with group the process group
// it leads, then SIGCONT with cont. A process gone meanwhile is not an
// error: it needs no signal.
func sendOnPidfd(pfd int, p SafePID, sig syscall.Signal, cont, group bool) error {
	flags := 0
	var g safeGroup
	var err error
	if group {
		if g, err = CheckGroupLeader(p); err != nil {
			return err
		}
		flags = pidfdSignalProcessGroup
	}
	err = unix.PidfdSendSignal(pfd, sig, nil, flags)
	if group && err == unix.EINVAL {
		// No PIDFD_SIGNAL_PROCESS_GROUP: is the pinned leader still there?
		if err := unix.PidfdSendSignal(pfd, 0, nil, 0); err == unix.ESRCH {
			return nil
		}
		return KillGroup(g, withCont(sig, cont)...)
	}
	if err == nil && cont {
		err = unix.PidfdSendSignal(pfd, unix.SIGCONT, nil, flags)
	}
	if err != nil && err != unix.ESRCH {
		return err
	}
	return nil
}
