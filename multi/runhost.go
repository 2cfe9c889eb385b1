package multi

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/internal/launch"
	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/internal/supervise"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// A runHost does to the nodes of a Run what the supervisor asks, with
// the verbs' own work, and keeps each node's last result for the
// RunError.
type runHost struct {
	v    *call
	at   map[string]int // each node's index in the Cluster
	mu   sync.Mutex
	last []Result
}

// newRunHost is the host of a run of c, stopping its nodes as o says,
// with no settle window: the run watches its nodes for their whole life.
func newRunHost(c *Cluster, o StopOptions) *runHost {
	v := c.call(o.plan())
	v.settle = 0
	h := &runHost{v: v, at: make(map[string]int, len(c.Nodes)), last: make([]Result, len(c.Nodes))}
	for i, n := range c.Nodes {
		h.at[n.Name] = i
		h.last[i].Node = n
	}
	return h
}

// keep records r as its node's last result, and returns what the
// supervisor reads of it.
func (h *runHost) keep(r Result) supervise.Outcome {
	h.mu.Lock()
	if i, ok := h.at[r.Node.Name]; ok {
		h.last[i] = r
	}
	h.mu.Unlock()
	return outcome(r)
}

// keepAll is keep of each of rs, which are of the Cluster's nodes, in
// its order.
func (h *runHost) keepAll(rs []Result) []supervise.Outcome {
	h.mu.Lock()
	copy(h.last, rs)
	h.mu.Unlock()
	return outcomes(rs)
}

// outcomes are what the supervisor reads of rs.
func outcomes(rs []Result) []supervise.Outcome {
	out := make([]supervise.Outcome, len(rs))
	for i, r := range rs {
		out[i] = outcome(r)
	}
	return out
}

// outcome is what the supervisor reads of r. A node found running is a
// failure of the run (or, --wait-for-lock, one it stands by for): its
// node is not the run's.
func outcome(r Result) supervise.Outcome {
	err := r.Err
	if r.Outcome == AlreadyRunning {
		err = &NodeError{Node: r.Node.Name, Op: "start", Err: &pidfile.HeldError{Path: r.Node.PidFile, PID: r.PID}}
	}
	return supervise.Outcome{PID: r.PID, Err: err, Cgroup: r.Node.Cgroup}
}

// results are the nodes' last results, in the Cluster's order.
func (h *runHost) results() []Result {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Result(nil), h.last...)
}

// Check refuses the whole set before anything starts, as every verb
// that starts does, or with extra, when not nil, as the reason; it
// reports each result it fails.
func (h *runHost) Check(extra error) ([]supervise.Outcome, bool) {
	c := h.v
	results := c.results()
	ok := c.checkDistinct("run", results) && c.checkFiles("run", results) && c.checkRecords("run", results) && c.checkLimits("run", results) && c.makeRunDir("run", results)
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
	return h.keepAll(results), ok
}

// StartAll starts every node, handing rp to each start.
func (h *runHost) StartAll(ctx context.Context, rp *launch.Reaper) []supervise.Outcome {
	c := h.v
	c.rp = rp
	results := c.results()
	c.startAll(ctx, results, func(int) (string, bool) { return "started", true })
	return h.keepAll(results)
}

// Start starts n again ("restarted", "took over"), handing rp to the
// start; what the node's last run left is killed before it runs again.
func (h *runHost) Start(ctx context.Context, rp *launch.Reaper, n nodes.Node, word string) supervise.Outcome {
	c := h.v.Cluster.call(h.v.plan)
	c.settle, c.rp, c.clean = 0, rp, true
	res := []Result{{Node: n}}
	c.startAll(ctx, res, func(int) (string, bool) { return word, true })
	return h.keep(res[0])
}

// StopWait stops ns as StopWait does, with the run's stop options.
func (h *runHost) StopWait(ctx context.Context, ns []nodes.Node) []supervise.Outcome {
	c := h.v
	results := make([]Result, len(ns))
	for i, n := range ns {
		if n.Cgroup == "" {
			// The run's nodes are its spec's: the cgroup its start made
			// is in the record, and stopwait waits for that tree too.
			if rec, err := record.Read(c.rundir(), n.Name); err == nil {
				n.Cgroup = rec.Cgroup
				if n.KillMode == "" {
					n.KillMode = rec.KillMode
				}
			}
		}
		results[i].Node = n
	}
	c.stopWait(ctx, results, stopOpts{op: "stopwait", report: true})
	c.closeKept(ns)
	for _, r := range results {
		h.keep(r)
	}
	return outcomes(results)
}

// Exited says that n's process pid ended with ws: stopped on purpose
// from another shell, or on its own.
func (h *runHost) Exited(n nodes.Node, pid int, ws syscall.WaitStatus, onPurpose bool) supervise.Outcome {
	if onPurpose {
		return h.keep(Result{Node: n, Outcome: Stopped, PID: pid, Exit: exitStatus(ws)})
	}
	err := h.Fail(n, &launch.ExitError{Status: ws, Err: fmt.Errorf("%w (%s)", supervise.ErrNodeExited, launch.DescribeExit(ws))})
	r := Result{Node: n, Outcome: Failed, PID: pid, Exit: exitStatus(ws), Err: err}
	// Its tree is gone (KillTree): its folder goes too; a start of it
	// again makes it again.
	if rec, err := record.Read(h.v.rundir(), n.Name); err == nil && rec.Cgroup != "" {
		r.Node.Cgroup = rec.Cgroup
		cgroup.WaitEmpty(rec.Cgroup, h.v.rundir(), n.Name, time.Now().Add(failedTreeWait), nil)
		h.v.removeCgroup(&r, false)
	}
	return h.keep(r)
}

// KillTree KILLs every process in the cgroup n's record says it runs in
// (cgroup.kill), and reports whether it did: false where it has none,
// nothing is in it, or its kill mode is process (its children are left,
// as asked).
func (h *runHost) KillTree(n nodes.Node) bool {
	rundir := h.v.rundir()
	rec, err := record.Read(rundir, n.Name)
	if err != nil || rec.Cgroup == "" || rec.KillMode == cgroup.Process {
		return false
	}
	if t, err := cgroup.Read(rec.Cgroup, rundir, n.Name); err != nil || !t.Populated {
		return false
	}
	return cgroup.Kill(rec.Cgroup, rundir, n.Name) == nil
}

// Fail is err, the run's failure on n, as a NodeError.
func (h *runHost) Fail(n nodes.Node, err error) error {
	return &NodeError{Node: n.Name, Op: "run", Err: err}
}
