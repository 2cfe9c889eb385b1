package multi

import (
	"errors"
	"os"
	"syscall"

	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/internal/record"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
	"github.com/multi-launcher/multi/waiter"
)

// recordedProcess returns the process n's record names, which the lock
// holder must be before it is signalled. It is zero, and any holder is
// taken, when there is nothing to check against: no record (a node given
// by its pidfile alone), a record of another pidfile, or a record without
// a process (written by an older multi, or by a start that has not seen
// its node hold the lock yet: start writes a record without a process
// before it spawns the node).
func (c *call) recordedProcess(n nodes.Node) nodes.Started {
	rec, st, err := record.ReadStarted(c.rundir(), n.Name)
	if err != nil || rec.PidFile != n.PidFile {
		return nodes.Started{}
	}
	return st
}

// treeResults is results for a verb that acts on running trees (stop,
// stopwait, kill, send, restart): a node built with nodes.Spec.Nodes (no
// cgroup, no recorded process) takes from its record where its start put
// its tree, and the process it names (record.ResolveNode); without
// them a stop would take the node's session for its tree, miss what left
// the session, and leave the cgroup folder behind.
func (c *call) treeResults() []Result {
	results := c.results()
	for i := range results {
		results[i].Node = record.ResolveNode(c.rundir(), results[i].Node)
	}
	return results
}

// signalRecorded is pin.SignalKeep of n's pidfile (for writing, in its folder
// as dirs has it open), with the process n's record names as the holder
// to be: the one n was resolved with ([nodes.Node.Recorded]: that record
// is not read a second time), else the record read now. A record read
// before a concurrent start recorded its node is read once more before
// the holder is called a mismatch.
func (c *call) signalRecorded(n nodes.Node, sig syscall.Signal, dirs *pidfile.Folders, keep bool) (pidfile.Info, *pidfile.Handle, *os.File, error) {
	want := n.Recorded
	if want.PID == 0 {
		want = c.recordedProcess(n)
	}
	if want.PID == 0 {
		err := c.unconfirmed(n)
		if err == nil {
			err = c.othersPidfile(n) // one look at the records, only when needed
		}
		if err != nil {
			return pidfile.Info{Path: n.PidFile}, nil, nil, err
		}
	}
	info, h, pidfd, err := pin.SignalKeep(n.PidFile, 0, want, sig, c.plan.group, true, dirs, keep)
	var he *pin.HolderError
	if errors.As(err, &he) {
		if again := c.recordedProcess(n); again != want {
			if h != nil {
				h.Close()
			}
			if again.PID == 0 {
				if err := c.unconfirmed(n); err != nil {
					return pidfile.Info{Path: n.PidFile}, nil, nil, err
				}
			}
			info, h, pidfd, err = pin.SignalKeep(n.PidFile, 0, again, sig, c.plan.group, true, dirs, keep)
		}
	}
	if errors.As(err, &he) {
		he.Node = n.Name
	}
	return info, h, pidfd, err
}

// killRecorded is pin.KillHeld (the SIGKILL round) of t, n's target, with the
// process n's record names as the holder to be when the pidfile must be
// opened again.
func (c *call) killRecorded(n nodes.Node, t waiter.Target, sig syscall.Signal) error {
	err := pin.KillHeld(t.Handle, t.Pidfd, t.Path, t.PID, c.recordedProcess(n), sig, c.plan.group)
	var he *pin.HolderError
	if errors.As(err, &he) {
		he.Node = n.Name
	}
	return err
}

// heldRecord says what a start of n that found its lock held by pid puts
// back in n's record, which it rewrote without a process: prev, the
// process the record named before, while that process runs (the holder,
// most likely: the node was running); no process when it is gone (the
// holder is then a concurrent start's node, which a dead process must not
// stand for, or no stop could check it). With put false nothing is put
// back: the record names the holder by now, written by the start that
// started it.
func (c *call) heldRecord(n nodes.Node, prev nodes.Started, pid int) (st nodes.Started, put bool) {
	if _, cur, err := record.ReadStarted(c.rundir(), n.Name); err == nil && cur.PID == pid && cur != prev {
		return nodes.Started{}, false
	}
	if prev.PID == 0 {
		return prev, true
	}
	if _, ok := pin.RecordedRuns(prev); ok {
		return prev, true
	}
	return nodes.Started{}, true
}
