package multi

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/internal/record"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// lostCandidate returns the process n's record names when nothing holds
// n's lock (info is Absent or Stale) and the record is of the same
// pidfile: the process that may be lost, not yet checked.
func (c *call) lostCandidate(n nodes.Node, info pidfile.Info) (nodes.Started, bool) {
	if info.State != pidfile.Absent && info.State != pidfile.Stale {
		return nodes.Started{}, false
	}
	rec, st, err := record.ReadStarted(c.rundir(), n.Name)
	if err != nil || st.PID == 0 || rec.PidFile != n.PidFile {
		return nodes.Started{}, false
	}
	// Never a candidate, so never reported lost; pin.SignalLost checks again
	// before it pins one.
	if _, err := pin.CheckPID(st.PID); err != nil {
		return nodes.Started{}, false
	}
	return st, true
}

// lostProc returns a [LostError] if n is lost: nothing holds its lock, but
// the process its record names runs, with the same start time, and goes
// on running. A pid whose start time differs is another process that took
// the recycled pid; it is none of multi's business.
//
// A process on its way out is not lost but stopping: the kernel drops a
// process's locks early in its exit, and a self-locking node releases its
// lock just before it exits. So the recorded process is waited for
// (through a pidfd, while ctx lasts; see [pin.WaitOnItsWay]): up to pin.ExitGrace
// when its pidfile is gone, up to exitingWait if it has begun to exit
// (PF_EXITING). Gone by then, the node is neither lost nor stopping; still
// exiting, lostProc returns its pid as stopping.
func (c *call) lostProc(ctx context.Context, n nodes.Node, info pidfile.Info, exitingWait time.Duration) (lost *LostError, stopping int) {
	st, ok := c.lostCandidate(n, info)
	if !ok {
		return nil, 0
	}
	p, ok := pin.RecordedRuns(st)
	if !ok {
		return nil, 0
	}
	if pin.WaitOnItsWay(ctx, st, p, info.State == pidfile.Absent, exitingWait) {
		return nil, 0
	}
	p, ok = pin.RecordedRuns(st)
	switch {
	case !ok:
		return nil, 0
	case p.Exiting():
		return nil, st.PID
	}
	return &LostError{PID: st.PID, Started: p.Start()}, 0
}

// stoppingError is a node whose process let go of its lock and is still
// exiting after the wait (see lostProc).
func stoppingError(pid int) error {
	return fmt.Errorf("%w: pid %d let go of its pidfile's lock and is still exiting", errStopping, pid)
}

// awaitLost waits for the lost process of r (signalled already) to exit,
// with the plan's timeout: then SIGKILL, and wait again.
func (c *call) awaitLost(ctx context.Context, op string, r *Result) {
	sig, timeout := c.plan.sig, c.plan.timeout
	wctx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 && sig != syscall.SIGKILL {
		wctx, cancel = context.WithTimeout(ctx, timeout)
	}
	err := pin.WaitLost(wctx, r.lost)
	cancel()
	killed := false
	if err != nil && ctx.Err() == nil && timeout > 0 && sig != syscall.SIGKILL {
		if _, kerr := pin.SignalLost(r.lost, syscall.SIGKILL); kerr != nil {
			r.fail(op, kerr)
			return
		}
		r.KilledAfter = timeout
		killed = true
		err = pin.WaitLost(ctx, r.lost)
	}
	if err != nil {
		r.fail(op, fmt.Errorf("still running (pid %d): %w", r.PID, err))
		return
	}
	c.stopped(r, op, sig)
	if killed && r.Err == nil {
		r.Outcome = KilledAfterTimeout
	}
}

// lostOne deals with a node whose lock nobody holds but whose recorded
// process may run (see [LostError]), and reports whether it did: without
// c.plan.lost it fails, its record and pidfile kept; with it, the process
// is signalled once pinned and checked, and r.lost names it.
func (c *call) lostOne(r *Result, op string, sig syscall.Signal, info pidfile.Info) bool {
	if !c.plan.lost {
		// A process on its way out (even one still exiting after the
		// wait) is not lost: there is nothing to signal.
		lost, _ := c.lostProc(context.Background(), r.Node, info, pin.GoneWait)
		if lost == nil {
			return false
		}
		r.PID = lost.PID
		r.fail(op, lost)
		return true
	}
	st, ok := c.lostCandidate(r.Node, info)
	if !ok {
		return false
	}
	if !c.signalLost(r, op, sig, st) {
		return r.Err != nil
	}
	return true
}

// signalLost signals st, the process r's record names, running without
// its node's lock, and reports whether it did (r.lost then names it);
// false with r failed when it could not, false alone when it is gone.
// pin.SignalLost makes the only start-time check that counts: after the
// pidfd pins the process.
func (c *call) signalLost(r *Result, op string, sig syscall.Signal, st nodes.Started) bool {
	if st.PID <= 1 {
		return false
	}
	sent, err := pin.SignalLost(st, sig)
	if err != nil {
		r.PID = st.PID
		r.fail(op, err)
		return false
	}
	if !sent {
		return false // gone, or the pid is another's: not running
	}
	r.PID, r.Signal, r.Lost, r.lost = st.PID, sig, true, st
	return true
}
