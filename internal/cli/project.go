package cli

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
	"github.com/urfave/cli/v2"
)

// A project is the working folder a node was started in, which its record
// keeps (see README, "A project's nodes are its own"). Without names, a
// verb acts on the nodes recorded for the folder it runs in; --all, on
// every recorded node. The default rundir is shared by every project of a
// user: without this, multi stopwait in one folder would stop another's
// nodes.

// projectNames returns the full names of the nodes recorded in rundir
// that were started in the folder wd (or with no folder recorded), for a
// verb given no names; nil when
// nothing is recorded (the resolve says so). It is an error when records
// exist but none of them is this folder's: the message names the folders
// they were started in.
func projectNames(c *cli.Context, rundir, wd string, skipped func(error)) ([]string, error) {
	recs, err := record.ReadAll(rundir)
	if len(recs) == 0 {
		return nil, nil // the resolve reads the rundir again and says why
	}
	if err != nil {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				skipped(e)
			}
		}
	}
	var names, others []string
	here, _ := os.Stat(wd)
	same := map[string]bool{} // by recorded folder
	for _, n := range recs {
		if _, seen := same[n.Dir]; !seen && here != nil && n.Dir != wd && n.Dir != "" {
			// One folder reached by two paths (a link on the way).
			st, err := os.Stat(n.Dir)
			same[n.Dir] = err == nil && os.SameFile(st, here)
		}
		if n.Dir == wd || n.Dir == "" || same[n.Dir] {
			// No folder recorded (a library caller's node): no project
			// can tell, so every project's.
			names = append(names, n.Name+"@"+n.Host)
		} else if !slices.Contains(others, n.Dir) {
			others = append(others, n.Dir)
		}
	}
	if len(names) > 0 {
		return names, nil
	}
	for i, d := range others {
		others[i] = nodes.Printable(d)
	}
	return nil, usage(c, fmt.Errorf("%w, and none of the %d recorded in %s was started in %s, this project's folder (they were in %s): give their names, or --all for every recorded node",
		nodes.ErrNoNodes, len(recs), rundir, nodes.Printable(wd), strings.Join(others, ", ")))
}

// errStartNoNames: a start without names starts the recorded nodes as
// recorded; a command or options for all of them would rewrite every
// record at once.
var errStartNoNames = errors.New("without names, start starts every recorded node of this project that is down, with its recorded command: give names with a command or options")
