package pin

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/testhooks"
	"github.com/multi-launcher/multi/nodes"
)

// SignalMember sends sig to m, a member of the session of st's node that
// [Members] found, and reports whether it did. It pins m with a pidfd and
// reads it again after that: still the process it was (same start time),
// still in the node's session, and the session still the node's. It says
// false when m is gone or is no longer such a member.
func SignalMember(m nodes.Proc, st nodes.Started, sig syscall.Signal) (bool, error) {
	p, err := CheckPID(m.PID)
	if err != nil {
		return false, err
	}
	if h := testhooks.BeforePin; h != nil {
		h(m.PID)
	}
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
	cur, err := nodes.ReadProc(m.PID)
	if err != nil || cur.StartTicks != m.StartTicks || !isMember(cur, st) || !SessionIsNodes(st) {
		return false, nil
	}
	if err := unix.PidfdSendSignal(pfd, sig, nil, 0); err != nil {
		if err == unix.ESRCH {
			return false, nil
		}
		return false, fmt.Errorf("signal %s to pid %d of session %d: %w", SignalName(sig), m.PID, st.PID, err)
	}
	return true, nil
}
