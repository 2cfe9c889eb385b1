//go:build unix

package launch

import (
	"fmt"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/nodes/pidfile"
)

// Exited reports whether the child has exited (a zombie now), without
// reaping it: one system call, for a poll; one whose exit is under way
// is seen at the next.
func (ch *Child) Exited() bool { return waitable(ch.pid) }

// LogOffset is the logfile's size before the child started (its own
// lines come after), -1 if unknown.
func (ch *Child) LogOffset() int64 { return ch.logOff }

// Stop ends a child that did not become ready: TERM, and KILL if it has
// not exited after grace. It is this process's own unreaped child, so its
// pid names no other process. Its stale pidfile is removed; the result
// says how it ended ("stopped it: exit status 0"), with its log's last
// lines.
func (ch *Child) Stop(grace time.Duration) string {
	ch.cmd.Process.Signal(syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for delay := time.Millisecond; !exited(ch.pid) && time.Now().Before(deadline); delay = min(2*delay, 50*time.Millisecond) {
		time.Sleep(delay)
	}
	how := "stopped it"
	if !exited(ch.pid) {
		ch.cmd.Process.Signal(syscall.SIGKILL)
		how = fmt.Sprintf("killed it after %s", grace)
	}
	ws, err := ch.rp.waitChild(ch.cmd)
	pidfile.RemoveStale(ch.node.PidFile)
	// A node that is not ready is not started: nothing of its tree is
	// left running unsaid.
	left := ch.leftBehind()
	if left != "" {
		left = "; " + left
	}
	if err != nil {
		return how + left
	}
	return fmt.Sprintf("%s (pid %d, %s; see %s)", how, ch.pid, DescribeExit(ws), seeLog(ch.cmd, ch.node)) + ch.logEnds() + left
}
