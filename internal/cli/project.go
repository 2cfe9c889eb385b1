package cli

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
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
	mine := project(wd)
	for _, n := range recs {
		if mine(n.Dir) {
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

// project returns whether a node recorded with the folder dir is of the
// project in the folder wd: the same folder, reached by the same path or
// another (a link on the way), or no folder recorded (a library caller's
// node, which no project can tell, so every project's).
func project(wd string) func(dir string) bool {
	here, _ := os.Stat(wd)
	same := map[string]bool{}
	return func(dir string) bool {
		if dir == wd || dir == "" {
			return true
		}
		if _, seen := same[dir]; !seen {
			st, err := os.Stat(dir)
			same[dir] = err == nil && here != nil && os.SameFile(st, here)
		}
		return same[dir]
	}
}

// otherProjects keeps a verb in its project when it was given a count
// (celery's "multi start 3"): the names a count expands to were not
// given, so a node of another project's (recorded as started in another
// folder) is not reached by them, but refused, nothing done (--all
// reaches them). A start given a command for a node another project
// has recorded, not running, is named: it goes on, and says whose
// record it replaces.
func otherProjects(c *cli.Context, a *call, rundir, wd string, ns []nodes.Node) error {
	counted := a.project && len(a.Names) == 1 && isCount(a.Names[0])
	if !counted && !(a.starts && a.HasCommand) {
		return nil
	}
	if rundir == "" {
		rundir = nodes.DefaultRunDir()
	}
	mine := project(wd)
	var theirs, dirs []string
	for _, n := range ns {
		rec, err := record.Read(rundir, n.Name)
		if err != nil || mine(rec.Dir) {
			continue
		}
		switch {
		case counted && !a.All:
			theirs = append(theirs, n.Name)
			if d := nodes.Printable(rec.Dir); !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		case a.starts && a.HasCommand:
			if info, err := pidfile.Inspect(n.PidFile); err == nil && info.State != pidfile.Running {
				fmt.Fprintf(c.App.ErrWriter, "multi %s: warning: %s was recorded as started in %s (another project's, not running); this start records it for %s\n",
					c.Command.Name, n.Name, nodes.Printable(rec.Dir), nodes.Printable(wd))
			}
		}
	}
	if len(theirs) == 0 {
		return nil
	}
	return usage(c, fmt.Errorf("%s of the count %s %s another project's, started in %s, not in %s: name them to reach them, count with another --range-prefix, or give this project its own --rundir; nothing done",
		strings.Join(theirs, ", "), a.Names[0], are(len(theirs)), strings.Join(dirs, ", "), nodes.Printable(wd)))
}

func are(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// isCount reports whether a lone NODES word is celery's count ("3").
func isCount(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil && strings.Trim(s, "0123456789") == ""
}

// errStartNoNames: a start without names starts the recorded nodes as
// recorded; a command or options for all of them would rewrite every
// record at once.
var errStartNoNames = errors.New("without names, start starts every recorded node of this project that is down, with its recorded command: give names with a command or options")
