//go:build unix

package supervise

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/launch"
	"github.com/multi-launcher/multi/nodes"

	"github.com/multi-launcher/multi/internal/pin"
)

// nodeExited takes in the exit of a node's process, from the reaper.
func (r *run) nodeExited(e launch.NodeExit) {
	rn := r.byPID[e.PID]
	if rn == nil {
		r.early[e.PID] = e.Status // its start's result is on its way
		return
	}
	delete(r.byPID, e.PID)
	rn.pid = 0
	ws := e.Status
	rn.exits, rn.lastExit = rn.exits+1, launch.ExitCode(ws)
	if r.stopping {
		if !(ws.Exited() && ws.ExitStatus() == 0) && !(ws.Signaled() && ws.Signal() == r.o.Signal) {
			r.decide(launch.ExitCode(ws), r.exited(rn, e.PID, ws))
		}
		r.maybeEnd()
		return
	}
	if !r.tagged(rn.n.Name) {
		r.logf("%s: stopped from another shell (pid %d, %s); left down", rn.n.Name, e.PID, launch.DescribeExit(ws))
		r.h.Exited(rn.n, e.PID, ws, true)
		r.maybeEnd()
		return
	}
	r.logf("%s: exited (pid %d, %s)", rn.n.Name, e.PID, launch.DescribeExit(ws))
	// Its process gone, the rest of its tree goes too (KillMode=mixed,
	// as systemd does when a service's main process exits): nothing of
	// it outlives the run, or runs beside the node started again.
	if r.h.KillTree(rn.n) {
		r.logf("%s: killed what it left in its cgroup", rn.n.Name)
	}
	r.onExit(rn, ws, r.exited(rn, e.PID, ws))
}

// exited records that the node's process pid exited on its own, and
// returns the error that says so.
func (r *run) exited(rn *runNode, pid int, ws syscall.WaitStatus) error {
	return r.h.Exited(rn.n, pid, ws, false).Err
}

// onExit applies the policy to a node that ended on its own; why says so.
func (r *run) onExit(rn *runNode, ws syscall.WaitStatus, why error) {
	switch r.o.OnExit {
	case Ignore:
		r.decide(launch.ExitCode(ws), why)
		r.logf("%s: left down (--on-exit=ignore)", rn.n.Name)
		r.maybeEnd()
	case Restart:
		if r.crashLoop(rn, ws, why) {
			return
		}
		first, most := r.o.Backoff, r.o.MaxBackoff
		if !rn.since.IsZero() && time.Since(rn.since) >= most {
			rn.restarts = 0 // it ran well for a while: a fresh start
		}
		delay := first
		for i := 0; i < rn.restarts && delay < most; i++ {
			delay *= 2
		}
		delay = min(delay, most)
		rn.restarts++
		rn.restartsTotal++
		r.logf("%s: restarting in %s (restart %d)", rn.n.Name, delay, rn.restarts)
		rn.starting = true // counts as about to run
		rn.waiting = time.AfterFunc(delay, func() {
			r.post(func() {
				rn.waiting = nil
				if r.stopping {
					rn.starting = false
					r.maybeEnd()
					return
				}
				r.startNode(rn, "restarted")
			})
		})
	default:
		r.decide(launch.ExitCode(ws), why)
		r.requestStop(rn.n.Name + " exited")
	}
}

// requestStop begins the stop of every node.
func (r *run) requestStop(why string) {
	if r.stopping {
		return
	}
	r.stopping = true
	r.logf("%s: stopping every node", why)
	r.notify("STOPPING=1")
	r.removeReady()
	var list []*runNode
	for _, rn := range r.nodes {
		if rn.waiting != nil && rn.waiting.Stop() {
			rn.waiting, rn.starting = nil, false
		}
		if rn.pid > 0 || r.heldByOther(rn) {
			list = append(list, rn)
		}
	}
	// Steps that wait for a lock held elsewhere hold nothing yet: they
	// are ended (our own unreaped children, signalled through their
	// pidfds).
	r.mu.Lock()
	r.halted = true
	for _, cmd := range r.standby {
		if cmd != nil && cmd.Process != nil {
			cmd.Process.Signal(syscall.SIGKILL)
		}
	}
	r.mu.Unlock()
	if len(list) > 0 {
		r.stopNodes(list)
	}
	r.maybeEnd()
}

// stopNodes stopwaits the nodes in the background.
func (r *run) stopNodes(list []*runNode) {
	r.stopsPending++
	ns := make([]nodes.Node, len(list))
	for i, rn := range list {
		ns[i] = rn.n
	}
	go func() {
		results := r.h.StopWait(context.Background(), ns)
		r.post(func() {
			r.stopsPending--
			for i, res := range results {
				if res.Err != nil {
					// Its lock may be held still: never "released".
					list[i].stopFailed = true
					r.decide(1, fmt.Errorf("%w: %w", ErrStopFailed, res.Err))
					r.stopDirect(list[i])
				}
			}
			r.maybeEnd()
		})
	}()
}

// stopDirect stops a node whose stop through its pidfile failed (its
// folder refused, say): the node's process is the run's own child, not
// yet reaped, so its pid is still its own; it gets the stop signal, and
// KILL after the stop's Timeout. The run's stop failed all the same: it exits 1.
func (r *run) stopDirect(rn *runNode) {
	pid := rn.pid
	if pid <= 0 {
		return
	}
	if err := r.rp.SignalKid(pid, r.o.Signal); err != nil {
		r.logf("%s: cannot signal its process (pid %d) either: %v", rn.n.Name, pid, err)
		return
	}
	r.logf("%s: not stopped through its pidfile; sent %s to its process (pid %d), the run's own child", rn.n.Name, pin.SignalName(r.o.Signal), pid)
	rn.direct = time.AfterFunc(r.o.Timeout, func() {
		r.post(func() {
			rn.direct = nil
			if rn.pid == pid {
				r.logf("%s: still running after %s; sent KILL (pid %d)", rn.n.Name, r.o.Timeout, pid)
				r.rp.SignalKid(pid, syscall.SIGKILL)
			}
			r.maybeEnd()
		})
	})
}

// giveUp ends the run once the grace after the stop is over, saying which
// nodes are still not reaped, and which of them were never stopped.
func (r *run) giveUp() {
	var failed, rest string
	for _, rn := range r.nodes {
		if rn.pid > 0 {
			s := fmt.Sprintf(" %s (pid %d)", rn.n.Name, rn.pid)
			if rn.stopFailed {
				failed += s
			} else {
				rest += s
			}
		}
	}
	if failed != "" {
		r.decide(1, fmt.Errorf("%w:%s still running", ErrStopFailed, failed))
		r.logf("could not stop%s: still running", failed)
	}
	if rest != "" {
		r.logf("their locks are released; not waiting longer for the exit of%s", rest)
	}
	r.end = true
}

// maybeEnd ends the loop when nothing is left to wait for.
func (r *run) maybeEnd() {
	busy := false
	for _, rn := range r.nodes {
		if rn.starting || rn.pid > 0 {
			busy = true
		}
	}
	if !r.stopping {
		if !busy {
			r.logf("no node left running")
			r.stopping = true
			r.end = true
		}
		return
	}
	if r.stopsPending > 0 {
		return
	}
	for _, rn := range r.nodes {
		// A node stopped directly has its own deadline (stopDirect).
		if rn.starting || rn.direct != nil && rn.pid > 0 {
			return
		}
	}
	if !busy {
		r.end = true
	} else if r.graceTimer == nil {
		r.graceTimer = time.NewTimer(endGrace)
	}
}
