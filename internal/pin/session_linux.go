package pin

import (
	"fmt"
	"syscall"

	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/internal/testhooks"
	"github.com/multi-launcher/multi/nodes"
)

// SignalMember sends sig to m, a member of the session of st's node that
// [Members] found, and reports whether it did. It pins m with a pidfd and
// reads it again after that: still the process it was (same start time),
// still in the node's session, and the session still the node's. It says
// false when m is gone or is no longer such a member.
func SignalMember(m proc.Stat, st nodes.Started, sig syscall.Signal) (bool, error) {
	p, err := CheckPID(m.PID)
	if err != nil {
		return false, err
	}
	if h := testhooks.BeforePin; h != nil {
		h(m.PID)
	}
	ok, err := signalChecked(p, sig, func(int) bool {
		cur, err := proc.Read(m.PID)
		return err == nil && cur.StartTicks == m.StartTicks && isMember(cur, st) && SessionIsNodes(st)
	})
	if err != nil && err != ErrNoPidfd {
		return false, fmt.Errorf("signal %s to pid %d of session %d: %w", SignalName(sig), m.PID, st.PID, err)
	}
	return ok, err
}
