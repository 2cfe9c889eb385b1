package multi

import (
	"fmt"

	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/nodes"
)

// cgroupLimits are the cgroup v2 limits of nodes.Limits: the controller
// and the file of the node's cgroup each is written into.
var cgroupLimits = []struct{ name, controller, file string }{
	{"memory_max", "memory", "memory.max"},
	{"memory_high", "memory", "memory.high"},
	{"cpu_max", "cpu", "cpu.max"},
	{"pids_max", "pids", "pids.max"},
}

// cgroupSettings are n's cgroup v2 limits as its cgroup's files take them.
func cgroupSettings(n nodes.Node) []cgroup.Setting {
	var out []cgroup.Setting
	for _, l := range cgroupLimits {
		if v := n.Limits.Get(l.name); v != "" {
			out = append(out, cgroup.Setting{Controller: l.controller, File: l.file, Value: v, Flag: nodes.LimitFlag(l.name)})
		}
	}
	return out
}

// limitsUnavailable says, for each node of c that has a cgroup v2 limit
// that cannot apply under the containment of c's starts, why not
// (ErrLimitUnavailable); nil when every limit can.
func (c *call) limitsUnavailable() map[string]error {
	var why map[string]error
	for _, n := range c.Nodes {
		for _, s := range cgroupSettings(n) {
			if err := c.containment().Available(s.Controller); err != nil {
				if why == nil {
					why = map[string]error{}
				}
				why[n.Name] = fmt.Errorf("%w: %s: %w; nothing started", ErrLimitUnavailable, s.Flag, err)
				break
			}
		}
	}
	return why
}

// checkLimits fails every result, and returns false, when a node's
// cgroup v2 limit cannot apply here: no node ever runs without a limit it
// was given, so the verb does nothing. Each node that has such a limit
// says why; the others name the first that has one.
func (c *call) checkLimits(op string, results []Result) bool {
	why := c.limitsUnavailable()
	if why == nil {
		return true
	}
	if cg := c.containment(); cg.Mode == cgroup.Cgroup {
		cgroup.RemoveParent(cg.Parent) // the rundir's folder, made to look: empty
	}
	first := ""
	for _, n := range c.Nodes {
		if why[n.Name] != nil {
			first = n.Name
			break
		}
	}
	for i := range results {
		err := why[results[i].Node.Name]
		if err == nil {
			err = fmt.Errorf("%w: %s's limits cannot apply (see its line); nothing started", ErrLimitUnavailable, first)
		}
		results[i].fail(op, err)
	}
	return false
}
