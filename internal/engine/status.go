package engine

import (
	"context"
	"errors"
	"time"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// A Status is package multi's Status, which documents it.
type Status struct {
	Node nodes.Node
	pidfile.Info
	Lost     *LostError
	Stopping int
	Tree     Tree
	Err      error // a *NodeError
	// Ready and ReadyErr: see statusReady.
	Ready    string
	ReadyErr error
	// Fatal: why a live multi run gave up on the node (it is down).
	Fatal string
	// ReadyStatus: the node's last STATUS= text, as its start recorded.
	ReadyStatus string
}

// Status is package multi's Cluster.Status, which documents it.
func (c *Set) Status(ctx context.Context) ([]Status, error) {
	if c.AllowSharedFolders {
		// The nodes' folders (a file: check's among them), as the other
		// verbs accept them; not the rundir, whose records status reads.
		nodes.AcceptShared("", c.Nodes)
	}
	out := make([]Status, len(c.Nodes))
	var errs []error
	begun := time.Now() // one look at /proc serves every node's session
	for i, n := range c.Nodes {
		n = nodes.ResolveRecorded(c.rundir(), n)
		out[i].Node = n
		info, err := pidfile.Inspect(n.PidFile)
		if err == nil && c.stoppedByMulti(n, info) {
			info = c.settleStopped(n, info) // stopped, not stale
		}
		out[i].Info = info
		switch {
		case err == nil && info.State == pidfile.Foreign:
			// Not a node's lock: status cannot tell (LSB "unknown").
			err = info.LockErr
		case err == nil:
			// A process on its way out is given a moment, not waited for.
			out[i].Lost, out[i].Stopping = c.lostProc(ctx, n, info, 0)
		}
		if err == nil {
			out[i].Tree, err = c.tree(n, out[i], begun)
		}
		if err != nil {
			out[i].Err = &NodeError{Node: n.Name, Op: "status", Err: err}
			errs = append(errs, out[i].Err)
		}
	}
	c.statusFatal(out)
	c.statusReady(ctx, out)
	return out, errors.Join(errs...)
}
