package multi

import (
	"context"
	"errors"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// A Status is one node's state, from its pidfile's lock.
type Status struct {
	Node nodes.Node
	pidfile.Info
	// Lost, if not nil, says the node is lost: nothing holds its lock
	// (State is Absent or Stale) but the process its record names, with
	// the same start time, still runs.
	Lost *LostError
	// Stopping, if not 0, is the pid of the node's process that has let
	// go of its lock and is exiting (State is Absent or Stale): the node
	// is on its way out, not lost.
	Stopping int
	// Err is set when the pidfile could not be inspected, or is locked by
	// something that is not a node (State [pidfile.Foreign]; Err then
	// matches [ErrForeignLock]).
	Err error
}

// Status inspects every node's pidfile, changing nothing.
func (c *Cluster) Status(ctx context.Context) ([]Status, error) {
	out := make([]Status, len(c.Nodes))
	var errs []error
	for i, n := range c.Nodes {
		out[i].Node = n
		info, err := pidfile.Inspect(n.PidFile)
		out[i].Info = info
		switch {
		case err == nil && info.State == pidfile.Foreign:
			// Not a node's lock: status cannot tell (LSB "unknown").
			err = info.LockErr
		case err == nil:
			// A process on its way out is given a moment, not waited for.
			out[i].Lost, out[i].Stopping = c.lostProc(ctx, n, info, 0)
		}
		if err != nil {
			out[i].Err = &NodeError{Node: n.Name, Op: "status", Err: err}
			errs = append(errs, out[i].Err)
		}
	}
	return out, errors.Join(errs...)
}
