package engine

import (
	"context"
	"fmt"
	"syscall"
)

// Send is package multi's Cluster.Send, which documents it.
func (c *Set) Send(ctx context.Context, sig syscall.Signal, o StopOptions) ([]Result, error) {
	c = c.with(o)
	results := c.treeResults()
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
			if ok, _, _ := c.signalOne(r, "signal", sig, nil, nil, false); ok {
				r.Outcome = Signalled
			}
		}
		c.report(r)
	}
	return results, joinErrs(results)
}
