package multi

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/multi-launcher/multi/internal/launch"
	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/internal/runtag"
	"github.com/multi-launcher/multi/internal/safefs"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// signalOne sends sig to r.Node through its lock and reports whether it
// did. When it did not, r says why: not running (a stale pidfile is
// removed, through the same open file), or a failure. With keep, the
// pidfile's handle it signalled through is returned open (opened for
// writing where it may be, see [pidfile.OpenToRemove]) for the caller to
// wait on, remove through and close, with the pidfd that pinned the
// holder (Linux). The pidfile is opened in its folder as dirs has it open
// (nil: reached for it alone), the run tag removed in the rundir as tags
// has it open (nil: reached for it alone).
//
// The holder is signalled only if it is the process the node's record
// names, when the record names one ([Cluster.recordedProcess]); else r
// fails with a [*pin.HolderError].
func (c *call) signalOne(r *Result, op string, sig syscall.Signal, dirs *pidfile.Folders, tags *safefs.Folder, keep bool) (bool, *pidfile.Handle, *os.File) {
	c.untagRun(r.Node.Name, op, sig, tags) // before the signal: see runTagExt
	info, h, pidfd, err := c.signalRecorded(r.Node, sig, dirs, keep)
	if h != nil && (err != nil || !keep) {
		defer h.Close()
	}
	switch {
	case errors.Is(err, pin.ErrNotRunning):
		if c.lostOne(r, op, sig, info) {
			return r.Err == nil, nil, nil
		}
		c.notRunning(r, op, info, h)
		return false, nil, nil
	case err != nil:
		// A decoy: the pidfile is another process's. With --lost, the
		// process the record names, if it runs, is the node, lost.
		var he *pin.HolderError
		if errors.As(err, &he) && c.plan.lost && c.signalLost(r, op, sig, he.Recorded) {
			return true, nil, nil
		}
		r.PID = info.PID
		r.fail(op, err)
		return false, nil, nil
	}
	if info.Mismatch() {
		r.FilePID = info.FilePID
		if info.FileErr != nil || r.FilePID == 0 {
			r.FilePID = -1
		}
	}
	r.PID, r.Signal = info.PID, sig
	c.markStopped(r, op, sig)
	if !keep {
		h = nil
	}
	return true, h, pidfd
}

// notRunning reports a node with nothing to signal, as info found it,
// removing a stale pidfile (through h, if not nil).
func (c *call) notRunning(r *Result, op string, info pidfile.Info, h *pidfile.Handle) {
	r.Outcome = NotRunning
	if info.State == pidfile.Absent {
		return
	}
	stopped := c.stoppedByMulti(r.Node, info)
	err := removeStale(r.Node.PidFile, h)
	var held *pidfile.HeldError
	switch {
	case errors.As(err, &held):
		// Started by someone else since we looked: leave it be.
		r.HeldBy = held.PID
	case err != nil:
		r.fail(op, fmt.Errorf("stale pidfile not removed: %w", err))
	case stopped:
		safefs.RemoveIn(c.rundir(), stopMark(r.Node.Name)) // stopped already
	default:
		r.Outcome = StaleRemoved
	}
}

// stopped reports a node whose lock was released and removes its pidfile,
// unless another instance has locked it since.
func (c *call) stopped(r *Result, op string, sig syscall.Signal) {
	c.stoppedOn(r, op, sig, nil)
}

// stoppedOn is stopped, removing the pidfile through h if not nil.
func (c *call) stoppedOn(r *Result, op string, sig syscall.Signal, h *pidfile.Handle) {
	r.Outcome, r.Signal = Stopped, sig
	if sig == syscall.SIGKILL {
		r.Outcome = Killed
	}
	err := removeStale(r.Node.PidFile, h)
	var held *pidfile.HeldError
	switch {
	case errors.As(err, &held):
		r.HeldBy = held.PID
	case err != nil:
		r.fail(op, fmt.Errorf("stopped, but %w", err))
	}
}

// removeStale removes the pidfile at path if nobody holds it: through h,
// the pidfile already open, if not nil.
//
// It waits (fdwait) for a descriptor it needs (the pidfile opened
// again without h, a brief lock through h): under a low RLIMIT_NOFILE
// those of the other nodes' waits, and of restart's starts, come free as
// they end.
func removeStale(path string, h *pidfile.Handle) error {
	return launch.RetryFDs(func() error {
		if h != nil {
			return h.RemoveIfStale()
		}
		return pidfile.RemoveStale(path)
	})
}

// untagRun removes the node's run tag when op with sig asks the node to
// end; without a run there is none, and nothing happens. The rundir is
// reached without following an untrusted link (once for a stop of many
// nodes: tags, if not nil): one swapped for a link makes root remove
// nothing elsewhere.
func (c *call) untagRun(name string, op string, sig syscall.Signal, tags *safefs.Folder) {
	if !endsNode(op, sig) {
		return
	}
	if tags != nil {
		tags.Remove(name + runtag.Ext)
		return
	}
	safefs.RemoveIn(c.rundir(), name+runtag.Ext)
}

// endsNode reports whether op with sig asks the node to end: stopwait,
// kill and restart always do; stop and signal do with TERM, INT, QUIT,
// KILL (not with HUP, USR1 and the like, which ask it to reload or
// report).
func endsNode(op string, sig syscall.Signal) bool {
	if op != "stop" && op != "signal" {
		return true
	}
	switch sig {
	case syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGKILL:
		return true
	}
	return false
}
