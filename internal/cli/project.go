package cli

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
	"github.com/urfave/cli/v2"
)

// A project is the working folder a node was started in, which its record
// keeps (see README, "A project's nodes are its own"). Without names, a
// verb acts on the nodes recorded for the folder it runs in; --all, on
// every recorded node. The default rundir is shared by every project of a
// user: without this, multi stopwait in one folder would stop another's
// nodes. A project file (projectfile.go), when there is one, names the
// project's nodes instead (resolveFile).

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

// resolveFile builds the set of nodes from the project file (see
// projectfile.go) when there is one and the call gives no command and
// names only its groups or nodes, or none; ok is false otherwise.
func resolveFile(c *cli.Context, a *call) (ns []nodes.Node, ok bool, err error) {
	if a.HasCommand || a.All || a.AllowSharedFolders || len(a.Names) == 0 && len(a.Options) > 0 && a.starts {
		return nil, false, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, false, nil
	}
	pf, err := findProjectFile(wd)
	if err != nil {
		return nil, true, usage(c, fmt.Errorf("%w; nothing done", err))
	}
	if pf == nil || !pf.selects(a.Names) {
		return nil, false, nil
	}
	a.file = pf
	pf.defaults(a)
	skipped := func(err error) {
		fmt.Fprintf(c.App.ErrWriter, "multi %s: warning: %v; skipped\n", c.Command.Name, err)
	}
	if ns, err = pf.nodes(a, rundir(a), a.Names, skipped); err != nil {
		return nil, true, usage(c, fmt.Errorf("%w; nothing done", err))
	}
	if a.starts {
		for _, n := range ns {
			if err := record.CheckSize(rundir(a), n); err != nil {
				return nil, true, usage(c, fmt.Errorf("%w; nothing done", err))
			}
		}
		return ns, true, nil
	}
	// What a scale started beyond the file's count is stopped too.
	var groups []string
	for _, name := range a.Names {
		if slices.ContainsFunc(pf.Groups, func(g projectGroup) bool { return g.Name == name }) {
			groups = append(groups, name)
		}
	}
	if len(a.Names) == 0 || len(groups) > 0 {
		// Those stopped are left out: a scale down forgets its nodes,
		// and a stopped one is no more than its record.
		for _, n := range pf.extras(rundir(a), groups, ns) {
			if info, err := pidfile.Inspect(n.PidFile); err != nil || info.State != pidfile.Stale && info.State != pidfile.Absent {
				ns = append(ns, n)
			}
		}
	}
	return ns, true, nil
}

// nodes expands the file's groups into nodes for the call a, each
// completed from its record in rundir as a named node's is (its running
// process, its tree): the flags a gives win over the file's keys. With
// only, just the nodes of the groups or nodes it names; a name that is
// neither is an error.
func (pf *projectFile) nodes(a *call, rundir string, only []string, skipped func(error)) ([]nodes.Node, error) {
	var out []nodes.Node
	names, pidfiles := map[string]string{}, map[string]string{}
	for _, g := range pf.Groups {
		s := g.Spec
		s.RunDir = rundir
		s.Env = append(slices.Clip(s.Env), a.Env...)
		s.Options = append(slices.Clip(s.Options), a.Options...)
		s.EnvFiles = append(slices.Clip(s.EnvFiles), a.EnvFiles...)
		if a.Ready != "" {
			s.Ready = a.Ready
		}
		if a.PidFile != "" {
			s.PidFile = a.PidFile
		}
		if a.LogFile != "" {
			s.LogFile = a.LogFile
		}
		s.SelfLock = s.SelfLock || a.SelfLock
		for _, name := range nodes.LimitNames {
			if v := a.Limits.Get(name); v != "" {
				s.Limits.Set(name, v) // checked as the flag was given
			}
		}
		ns, err := record.Resolve(s, a.AllowSharedFolders, skipped)
		if err != nil {
			return nil, fmt.Errorf("%s: group %s: %w", pf.Path, g.Name, err)
		}
		for _, n := range ns {
			if g.KillMode != "" {
				n.KillMode = g.KillMode
			}
			if other, dup := names[n.Name]; dup {
				return nil, fmt.Errorf("%s: node %s is in groups %s and %s", pf.Path, n.Name, other, g.Name)
			}
			if other, dup := pidfiles[n.PidFile]; dup {
				return nil, fmt.Errorf("%s: nodes %s and %s share the pidfile %s", pf.Path, other, n.Name, n.PidFile)
			}
			names[n.Name], pidfiles[n.PidFile] = g.Name, n.Name
			out = append(out, n)
		}
	}
	if len(only) == 0 {
		return out, nil
	}
	var sel []nodes.Node
	for _, want := range only {
		found := false
		for _, n := range out {
			if n.Group == want || n.Name == want || n.FullName() == want {
				found = true
				if !slices.ContainsFunc(sel, func(m nodes.Node) bool { return m.Name == n.Name }) {
					sel = append(sel, n)
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("%s: no group or node %s in it", pf.Path, nodes.Printable(want))
		}
	}
	return sel, nil
}

// selects reports whether every name given is one of the file's groups
// or nodes (by the names the groups give, before expansion of a count):
// then the verb acts on the file's nodes.
func (pf *projectFile) selects(names []string) bool {
	for _, want := range names {
		if !slices.ContainsFunc(pf.Groups, func(g projectGroup) bool {
			return g.Name == want || slices.Contains(g.Spec.Names, want) ||
				isCount(g.Spec.Names[0]) && strings.HasPrefix(want, g.Spec.RangePrefix)
		}) {
			return false
		}
	}
	return true
}

// defaults gives a the file's project-wide keys its command line did not
// give.
func (pf *projectFile) defaults(a *call) {
	a.RunDir = cmp.Or(a.RunDir, pf.RunDir)
	a.Settle = cmp.Or(a.Settle, pf.Settle)
	a.ReadyTimeout = cmp.Or(a.ReadyTimeout, pf.ReadyTimeout)
	a.Timeout = cmp.Or(a.Timeout, pf.StopTimeout)
	a.LockTimeout = cmp.Or(a.LockTimeout, pf.LockTimeout)
	a.Backoff = cmp.Or(a.Backoff, pf.Backoff)
	a.RestartWindow = cmp.Or(a.RestartWindow, pf.RestartWindow)
	a.MaxRestarts = cmp.Or(a.MaxRestarts, pf.MaxRestarts)
	if pf.OnExit != "" && !a.given["on-exit"] {
		a.OnExit = multi.OnExit(pf.OnExit) // it has a default: given or not
	}
}

// extras are the nodes recorded in rundir for the file's groups (groups,
// or all of them when nil), started under its folder, that are not among
// ns: what a scale up started beyond the file's count, or a group or
// name since removed from the file. The verbs that stop act on them too.
func (pf *projectFile) extras(rundir string, groups []string, ns []nodes.Node) []nodes.Node {
	recs, _ := record.ReadAll(rundir)
	var out []nodes.Node
	for _, r := range recs {
		switch {
		case r.Group == "" || !within(pf.Dir, r.Dir):
		case groups != nil && !slices.Contains(groups, r.Group):
		case slices.ContainsFunc(ns, func(n nodes.Node) bool { return n.Name == r.Name }):
		default:
			out = append(out, record.ResolveNode(rundir, r))
		}
	}
	return out
}
