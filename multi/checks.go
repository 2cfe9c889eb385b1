package multi

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/internal/runtag"
	"github.com/multi-launcher/multi/internal/safefs"
)

// The checks every verb that starts makes before anything starts.

// makeRunDir makes the rundir, and when it cannot, fails every result, so
// that no node starts when none could be recorded.
func (c *call) makeRunDir(op string, results []Result) bool {
	err := safefs.MakeDir(c.rundir())
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
func (c *call) checkDistinct(op string, results []Result) bool {
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
func (c *call) checkRecords(op string, results []Result) bool {
	for _, n := range c.Nodes {
		if err := record.CheckSize(c.rundir(), n); err != nil {
			for i := range results {
				results[i].fail(op, fmt.Errorf("%w; nothing done", err))
			}
			return false
		}
	}
	return true
}

// checkFiles fails every result, and returns false, when a node's
// logfile is a pidfile of the set (the log would be written into the
// pidfile, and deleted with it at the stop), or its pidfile or logfile is
// one of the rundir's own files (a record, which is rewritten whole; a
// lock, a spare, a run tag): the verb does nothing.
func (c *call) checkFiles(op string, results []Result) bool {
	pidfiles := map[string]string{}
	for _, n := range c.Nodes {
		pidfiles[filepath.Clean(n.PidFile)] = n.Name
	}
	rundir := filepath.Clean(c.rundir())
	multis := func(p string) bool {
		b := filepath.Base(p)
		return filepath.Dir(p) == rundir && (strings.HasPrefix(b, ".") || strings.HasSuffix(b, record.Ext) ||
			strings.HasSuffix(b, runtag.Ext) || strings.HasSuffix(b, runtag.FatalExt))
	}
	var err error
	for _, n := range c.Nodes {
		lf := filepath.Clean(n.LogFile)
		switch {
		case n.LogFile != "" && pidfiles[lf] != "":
			err = fmt.Errorf("%w: %s's logfile %s is the pidfile of %s; nothing done", ErrFileClash, n.Name, n.LogFile, pidfiles[lf])
		case n.LogFile != "" && multis(lf):
			err = fmt.Errorf("%w: %s's logfile %s is one of multi's own files in the rundir (records, locks, run tags); nothing done", ErrFileClash, n.Name, n.LogFile)
		case multis(filepath.Clean(n.PidFile)):
			err = fmt.Errorf("%w: %s's pidfile %s is one of multi's own files in the rundir (records, locks, run tags); nothing done", ErrFileClash, n.Name, n.PidFile)
		}
		if err != nil {
			break
		}
	}
	if err == nil {
		return true
	}
	for i := range results {
		results[i].fail(op, err)
	}
	return false
}
