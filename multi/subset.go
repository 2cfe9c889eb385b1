package multi

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/multi-launcher/multi/nodes"
)

// ErrUnknownNode: [Cluster.Only] was given a name that is not one of the
// cluster's nodes.
var ErrUnknownNode = errors.New("no such node")

// Only returns a new Cluster with the same settings as c on the nodes of
// c named (by short name, [nodes.Node.Name]), in c's order, so that a
// caller can act on a subset without building a Cluster of its own. A
// name that is not one of c's nodes is an error wrapping
// [ErrUnknownNode], and no Cluster is returned. The new Cluster shares
// c's Progress callback but not c's Progress lock: verbs of
// c and of the subset that run at once may call Progress at once.
func (c *Cluster) Only(names ...string) (*Cluster, error) {
	want := make(map[string]bool, len(names))
	for _, name := range names {
		want[name] = true
	}
	var ns []nodes.Node
	for _, n := range c.Nodes {
		if want[n.Name] {
			ns = append(ns, n)
			delete(want, n.Name)
		}
	}
	for _, name := range names {
		if want[name] {
			return nil, fmt.Errorf("multi: %w: %s", ErrUnknownNode, name)
		}
	}
	return c.sub(ns), nil
}

// Send sends sig to every running node, through its lock as every verb
// does (see Signals in the package doc), and returns without waiting: a
// HUP to reload, a USR1 to report. Unlike [Cluster.Stop] it is not a stop
// and sends sig, not o.Signal (of o it reads Group and Lost); a node's
// result is Signalled, with its Signal and PID. A node
// that is not running is reported so, its stale pidfile removed, and is
// not an error. sig must be a signal (> 0). A set that names a node twice
// is refused ([ErrDuplicateNode]).
func (c *Cluster) Send(ctx context.Context, sig syscall.Signal, o StopOptions) ([]Result, error) {
	c = c.with(o)
	results := c.results()
	if !c.checkDistinct("signal", results) {
		return results, joinErrs(results) // a node twice would be signalled twice
	}
	for i := range results {
		r := &results[i]
		switch {
		case sig <= 0:
			r.fail("signal", fmt.Errorf("invalid signal %d", int(sig)))
		case ctx.Err() != nil:
			r.fail("signal", ctx.Err())
		default:
			if ok, _, _ := c.signalOne(r, "signal", sig, nil, false); ok {
				r.Outcome = Signalled
			}
		}
		c.report(r)
	}
	return results, joinErrs(results)
}
