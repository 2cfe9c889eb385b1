package engine

import (
	"fmt"

	"github.com/multi-launcher/multi/nodes"
)

// The checks every verb that starts makes before anything starts.

// makeRunDir makes the rundir, and when it cannot, fails every result, so
// that no node starts when none could be recorded.
func (c *Set) makeRunDir(op string, results []Result) bool {
	err := nodes.MakeDir(c.rundir())
	if err == nil {
		return true
	}
	for i := range results {
		results[i].fail(op, fmt.Errorf("rundir: %w", err))
	}
	return false
}

// checkDistinct fails every result, and returns false, when two nodes
// share a name or a pidfile: they would race for one lock, or one result
// would never hear of its node, so the verb does nothing.
func (c *Set) checkDistinct(op string, results []Result) bool {
	names, pidfiles := map[string]bool{}, map[string]bool{}
	var err error
	for _, n := range c.Nodes {
		switch {
		case names[n.Name]:
			err = fmt.Errorf("%w: %s is given twice (pidfile %s); nothing done", ErrDuplicateNode, n.Name, n.PidFile)
		case pidfiles[n.PidFile]:
			err = fmt.Errorf("%w: %s has the pidfile %s of another node; nothing done", ErrDuplicateNode, n.Name, n.PidFile)
		}
		if err != nil {
			break
		}
		names[n.Name], pidfiles[n.PidFile] = true, true
	}
	if err == nil {
		return true
	}
	for i := range results {
		results[i].fail(op, err)
	}
	return false
}

// checkRecords fails every result, and returns false, when a node's
// record would be too large to read back ([nodes.ErrRecordTooLarge]):
// the node would run unrecorded, so the verb does nothing.
func (c *Set) checkRecords(op string, results []Result) bool {
	for _, n := range c.Nodes {
		if err := nodes.CheckRecord(c.rundir(), n); err != nil {
			for i := range results {
				results[i].fail(op, fmt.Errorf("%w; nothing done", err))
			}
			return false
		}
	}
	return true
}
