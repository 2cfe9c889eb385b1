//go:build unix

package launch

import (
	"fmt"
	"strings"

	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// leftBehind deals with what is left of the tree of the child, which
// has exited and been reaped, and says what it did, "" if nothing is
// left. The node's cgroup, made for this start, holds whatever the
// command forked: nothing of it may keep running; named, then killed. The
// session is the node's (the step's setsid): what remains of it is named,
// not signalled, as nothing says it is ours to stop.
//
// The cgroup is the node's, not this start's alone: when another process
// holds the node's lock by now (a concurrent start or restart of the
// node ran it in the same folder), only the members of the child's own
// session are its, and killed, each pinned and checked again.
func (ch *Child) leftBehind() string {
	if ch.node.Cgroup != "" {
		if info, err := pidfile.Inspect(ch.node.PidFile); err == nil && info.State == pidfile.Running && info.PID != ch.pid {
			return ch.sessionLeft(info.PID)
		}
		if left := cgroupLeft(ch.node.Cgroup); left != "" {
			return "killed what it left in its cgroup: " + left
		}
		return ""
	}
	left, _ := proc.SessionMembers(ch.pid)
	if len(left) == 0 {
		return ""
	}
	var names []string
	for _, p := range left {
		names = append(names, fmt.Sprintf("pid %d (%s)", p.PID, p.Comm))
	}
	return "processes of its session remain: " + strings.Join(names, ", ") + " (not signalled)"
}

// sessionLeft kills what is left of the child's session, the node's lock
// held by holder (another start's node) meanwhile, and says so.
func (ch *Child) sessionLeft(holder int) string {
	var names []string
	// The holder leads a session of its own (its step's setsid): never
	// a member of the child's.
	for _, m := range pin.KillSession(nodes.Started{PID: ch.pid, StartTicks: ch.bornTicks}) {
		names = append(names, fmt.Sprintf("pid %d (%s)", m.PID, m.Comm))
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("killed what it left of its session (pid %d, another start's, holds its lock now): %s", holder, strings.Join(names, ", "))
}
