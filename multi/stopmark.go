package multi

import (
	"errors"
	"strconv"
	"strings"
	"syscall"

	"github.com/multi-launcher/multi/internal/safefs"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// A plain stop does not wait for its node, so the pidfile the node leaves
// is stale once it is gone, as one left by a node that died on its own
// is. The stop mark tells them apart: RUNDIR/.NAME.stopped, holding the
// pid a stop (or signal) that asks the node to end was sent to. A stale
// pidfile whose text names that pid was left by a node multi stopped:
// status reports it stopped and removes it (it is multi's own), and a
// stop or stopwait reports the node not running rather than stale.

// stopMark is the name of the node's stop mark in the rundir.
func stopMark(name string) string { return "." + name + ".stopped" }

// markStopped leaves the node's stop mark, naming the pid r was signalled
// at, when op with sig asks the node to end and does not wait for it
// (stop, signal). Without one, status later says stale: nothing worse.
func (c *call) markStopped(r *Result, op string, sig syscall.Signal) {
	if op != "stop" && op != "signal" || !endsNode(op, sig) || r.PID <= 1 {
		return
	}
	d, err := safefs.OpenFolder(c.rundir(), false)
	if err != nil {
		return
	}
	defer d.Close()
	d.Make(stopMark(r.Node.Name), []byte(strconv.Itoa(r.PID)+"\n"), 0o600)
}

// stoppedByMulti reports whether the stale pidfile info describes was
// left by the process a stop of n's asked to end: its text names the pid
// the stop mark does.
func (c *call) stoppedByMulti(n nodes.Node, info pidfile.Info) bool {
	if info.State != pidfile.Stale || info.FilePID <= 1 {
		return false
	}
	b, err := safefs.ReadMade(c.rundir(), stopMark(n.Name), 32)
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return err == nil && pid == info.FilePID
}

// settleStopped removes the stale pidfile of a node multi stopped, and
// its stop mark, and returns what a look at the pidfile finds now: absent,
// or, when another start has locked it since, that. When the pidfile
// cannot be removed (not this user's), the node is still reported
// stopped.
func (c *call) settleStopped(n nodes.Node, info pidfile.Info) pidfile.Info {
	err := removeStale(n.PidFile, nil)
	var held *pidfile.HeldError
	if errors.As(err, &held) {
		if now, err := pidfile.Inspect(n.PidFile); err == nil {
			return now
		}
		return info
	}
	if err == nil {
		safefs.RemoveIn(c.rundir(), stopMark(n.Name))
	}
	info.State = pidfile.Absent
	return info
}
