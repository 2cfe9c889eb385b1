package multi

import (
	"syscall"

	"github.com/multi-launcher/multi/nodes"
	"golang.org/x/sys/unix"
)

// maxSignal is SIGRTMAX on Linux.
const maxSignal = 64

// sendPinned pins pid with a pidfd (pidfd_open(2)), checks that the lock on
// h is still held by pid, and signals through the pidfd
// (pidfd_send_signal(2)). Once the pidfd is open, the process it names
// cannot be confused with another even if it dies, so a holder seen after
// the open is the pinned process or the signal goes nowhere. It reports
// false when the holder changed, so that the caller looks again.
func sendPinned(h *nodes.Handle, pid int, sig syscall.Signal) (bool, error) {
	pfd, err := unix.PidfdOpen(pid, 0)
	switch err {
	case nil:
	case unix.ESRCH:
		return false, nil // gone already: the lock says what next
	case unix.ENOSYS, unix.EPERM, unix.EINVAL:
		// No pidfds here (old kernel, seccomp): the checked kill is all
		// there is.
		return true, killChecked(pid, sig)
	default:
		return false, err
	}
	defer unix.Close(pfd)
	state, now, err := h.Holder()
	if err != nil {
		return false, err
	}
	if state != nodes.Running || now != pid {
		return false, nil
	}
	if err := unix.PidfdSendSignal(pfd, sig, nil, 0); err != nil && err != unix.ESRCH {
		return true, err
	}
	return true, nil
}
