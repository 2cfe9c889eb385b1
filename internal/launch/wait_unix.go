//go:build unix

package launch

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/nodes/pidfile"
)

// Wait waits for the child, a node run to its end (a one-shot), to exit,
// and reaps it: nil for exit status 0, else an [*ExitError] saying how it
// ended, with its log's last lines. One that runs longer than timeout
// gets TERM, and KILL after grace ([ErrRanTooLong]). Its stale pidfile is
// removed. If ctx ends first, Wait returns ctx's error at once and the
// child is left running, reaped when it exits.
func (ch *Child) Wait(ctx context.Context, timeout, grace time.Duration) error {
	type end struct {
		ws  syscall.WaitStatus
		err error
	}
	// One waiter of the process, in a goroutine of its own: the signals
	// below go through cmd.Process, which knows once it is reaped (a
	// pidfd on Linux), so no other process can get them.
	ended := make(chan end, 1)
	go func() {
		ws, err := ch.rp.waitChild(ch.cmd)
		ended <- end{ws, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	var e end
	how := ""
	select {
	case e = <-ended:
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		ch.cmd.Process.Signal(syscall.SIGTERM)
		how = "stopped it"
		t.Reset(grace)
		select {
		case e = <-ended:
		case <-t.C:
			ch.cmd.Process.Signal(syscall.SIGKILL)
			how = fmt.Sprintf("killed it after %s", grace)
			e = <-ended
		}
	}
	pidfile.RemoveStale(ch.node.PidFile) // unlocked now; a new holder's is kept
	if e.err != nil {
		return e.err
	}
	if how == "" && e.ws.Exited() && e.ws.ExitStatus() == 0 {
		return nil
	}
	msg := fmt.Sprintf("pid %d, %s; see %s", ch.pid, DescribeExit(e.ws), seeLog(ch.cmd, ch.node)) + ch.logEnds()
	err := fmt.Errorf("ran to its end (%s)", msg)
	if how != "" {
		err = fmt.Errorf("%w after %s; %s (%s)", ErrRanTooLong, timeout, how, msg)
	}
	return &ExitError{Status: e.ws, PID: ch.pid, Err: err}
}
