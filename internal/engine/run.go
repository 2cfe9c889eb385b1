package engine

import (
	"context"
	"syscall"

	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/internal/launch"
	"github.com/multi-launcher/multi/nodes"
)

// What a foreground run (package supervise) asks of its nodes, on the Set
// it made for the run (see [Set.ForRun]).

// ForRun returns the Set a run works on: c's settings, o for its stops,
// no settle window (the run watches its nodes for their whole life).
func (c *Set) ForRun(o StopOptions) *Set {
	v := c.with(o)
	v.Settle = -1
	return v
}

// Signal is the signal the run's stop sends first.
func (c *Set) Signal() syscall.Signal { return c.signal() }

// Dir is the rundir the Set records in.
func (c *Set) Dir() string { return c.rundir() }

// RunCheck refuses the whole set before anything starts, as every verb
// that starts does, or with extra, when not nil, as the reason; it
// reports each result it fails.
func (c *Set) RunCheck(extra error) ([]Result, bool) {
	results := c.results()
	ok := c.checkDistinct("run", results) && c.checkFiles("run", results) && c.checkRecords("run", results) && c.makeRunDir("run", results)
	if ok && extra != nil {
		for i := range results {
			results[i].fail("run", extra)
		}
		ok = false
	}
	if !ok {
		for i := range results {
			c.report(&results[i])
		}
	}
	return results, ok
}

// RunStartAll starts every node, handing rp to each start.
func (c *Set) RunStartAll(ctx context.Context, rp *launch.Reaper) []Result {
	c.rp = rp
	results := c.results()
	c.startAll(ctx, results, func(int) (string, bool) { return "started", true })
	return results
}

// RunStart starts n again ("restarted", "took over"), handing rp to the
// start.
func (c *Set) RunStart(ctx context.Context, rp *launch.Reaper, n nodes.Node, word string) Result {
	c.rp = rp
	c.Clean = true // what the node's last run left is killed before it runs again
	res := []Result{{Node: n}}
	c.startAll(ctx, res, func(int) (string, bool) { return word, true })
	return res[0]
}

// RunStopWait stops ns as StopWait does, with the run's stop options.
func (c *Set) RunStopWait(ctx context.Context, ns []nodes.Node) []Result {
	results := make([]Result, len(ns))
	for i, n := range ns {
		if n.Cgroup == "" {
			// The run's nodes are its spec's: the cgroup its start made
			// is in the record, and stopwait waits for that tree too.
			if rec, err := nodes.ReadRecord(c.rundir(), n.Name); err == nil {
				n.Cgroup = rec.Cgroup
				if n.KillMode == "" {
					n.KillMode = rec.KillMode
				}
			}
		}
		results[i].Node = n
	}
	c.stopWait(ctx, results, stopOpts{op: "stopwait", sig: c.signal(), timeout: c.stop.Timeout, report: true})
	c.closeKept(ns)
	return results
}

// RunKillTree KILLs every process in the cgroup the record of the node
// named name says it runs in (cgroup.kill), and reports whether it did:
// false where it has none, nothing is in it, or its kill mode is process
// (its children are left, as asked).
func (c *Set) RunKillTree(name string) bool {
	rec, err := nodes.ReadRecord(c.rundir(), name)
	if err != nil || rec.Cgroup == "" || rec.KillMode == cgroup.Process {
		return false
	}
	if t, err := cgroup.Read(rec.Cgroup, c.rundir(), name); err != nil || !t.Populated {
		return false
	}
	return cgroup.Kill(rec.Cgroup, c.rundir(), name) == nil
}
