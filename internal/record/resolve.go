package record

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/multi-launcher/multi/internal/celery"
	"github.com/multi-launcher/multi/internal/safefs"
	"github.com/multi-launcher/multi/nodes"
)

// Resolve expands s like [nodes.Spec.Nodes] and fills in, from the
// records in the rundir, whatever s leaves out: a node's pidfile and
// logfile when no template was given for it, its command and working
// directory when s has no command, and what [ResolveNode] takes. Options
// given without a command replace the recorded options of the recorded
// command. With no names it returns every recorded node, and
// [nodes.ErrNoNodes] when there are none.
//
// allowShared accepts the rundir, and the folders of the nodes' files,
// although others than root and this user can write to them (see
// [AcceptShared]); records in such a rundir are then not read. skipped,
// if not nil, is called with each record Resolve cannot read (a warning
// to give): the record is taken as absent, so that one bad record leaves
// the others usable.
func Resolve(s nodes.Spec, allowShared bool, skipped func(error)) ([]nodes.Node, error) {
	rundir := s.RunDir
	if rundir == "" {
		rundir = nodes.DefaultRunDir()
	}
	if allowShared {
		AcceptShared(rundir, nil)
	}
	// The records read already (all of them, with no names), else read
	// here, each through one opening of the rundir.
	if skipped == nil {
		skipped = func(error) {}
	}
	var recorded map[string]nodes.Node
	if len(s.Names) == 0 {
		recs, err := readRecords(rundir, skipped)
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 && allowShared && safefs.SharedFolder(rundir) {
			return nil, fmt.Errorf("%w, and records in %s are %w", nodes.ErrNoNodes, rundir, errShared)
		}
		if len(recs) == 0 {
			return nil, fmt.Errorf("%w, and none recorded in %s", nodes.ErrNoNodes, rundir)
		}
		names := make([]string, len(recs))
		recorded = make(map[string]nodes.Node, len(recs))
		for i, r := range recs {
			names[i] = r.Name + "@" + r.Host
			recorded[r.Name] = r
		}
		s.Names, s.Prefix = names, ""
	} else {
		cleanRunDir(rundir) // ReadAll did it in the branch above
	}
	ns, err := s.Nodes()
	if err != nil {
		return nil, err
	}
	pidGiven, logGiven, err := given(s, len(ns))
	if err != nil {
		return nil, err
	}
	if allowShared {
		AcceptShared("", ns)
	}
	var d *safefs.Folder
	if recorded == nil {
		if d, err = safefs.OpenFolder(rundir, false); err == nil {
			defer d.Close()
		} else {
			d = nil // Read says why, node by node, as before
		}
	}
	read := func(name string) (nodes.Node, error) {
		if rec, ok := recorded[name]; ok {
			return rec, nil
		}
		rec, _, err := readRecord(d, rundir, name)
		return rec, err
	}
	for i := range ns {
		rec, err := read(ns[i].Name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil && (d == nil && recorded == nil) {
			return nil, err // the rundir's, not the record's
		}
		if err != nil {
			// As if absent: forget can remove it, start can replace it.
			skipped(err)
			continue
		}
		if !pidGiven[i] {
			ns[i].PidFile = rec.PidFile
		}
		if !logGiven[i] {
			ns[i].LogFile = rec.LogFile
		}
		takeRecorded(&ns[i], rec)
		if len(s.Command) > 0 {
			continue
		}
		ns[i].Dir, ns[i].SelfLock = rec.Dir, rec.SelfLock || s.SelfLock
		if ns[i].Group == "" {
			ns[i].Group = rec.Group
		}
		if len(s.After) == 0 {
			ns[i].After = rec.After
		}
		if len(s.EnvFiles) == 0 {
			ns[i].EnvFiles = rec.EnvFiles
		}
		if s.Limits == (nodes.Limits{}) {
			ns[i].Limits = rec.Limits // limits given replace them all, as --env does
		}
		if ns[i].Ready.Kind == "" {
			ns[i].Ready = rec.Ready
		}
		if len(s.Env) == 0 {
			ns[i].Env = rec.Env
		}
		if len(s.Options) == 0 {
			ns[i].Command, ns[i].Options = rec.Command, rec.Options
			continue
		}
		ns[i].Command = celery.Place(celery.Base(rec.Command, rec.Options), ns[i].Options)
	}
	return ns, nil
}

// givenMark ends the file templates [given] puts in the place of those a
// spec gives: the defaults end in .pid and .log, never in it.
const givenMark = ".given"

// given reports, for each of the n nodes s expands into, whether a
// pidfile and a logfile template were given for it (the Spec's PidFile
// or LogFile, or a NodeFiles entry whose scope names it) rather than left
// to RunDir's defaults: [Resolve] takes a defaulted file from the node's
// record. A NodeFiles entry wins over the Spec's template and the
// default; which nodes an entry names, its scope says, so s is expanded
// once more with each entry's template replaced by one that ends in
// givenMark, and the files that end in it were given. Only names, scopes
// and files are expanded again, as they were for s.
func given(s nodes.Spec, n int) (pidfile, logfile []bool, err error) {
	pidfile, logfile = make([]bool, n), make([]bool, n)
	for i := range n {
		pidfile[i], logfile[i] = s.PidFile != "", s.LogFile != ""
	}
	marked := nodes.Spec{Names: s.Names, Prefix: s.Prefix, Host: s.Host, RangePrefix: s.RangePrefix,
		RunDir: s.RunDir, Dir: "/"}
	for _, o := range s.NodeFiles {
		if o.Name == "pidfile" && s.PidFile == "" || o.Name == "logfile" && s.LogFile == "" {
			o.Value = "%n" + givenMark
			marked.NodeFiles = append(marked.NodeFiles, o)
		}
	}
	if len(marked.NodeFiles) == 0 {
		return pidfile, logfile, nil
	}
	ns, err := marked.Nodes()
	if err != nil {
		return nil, nil, err
	}
	for i := range ns {
		pidfile[i] = pidfile[i] || strings.HasSuffix(ns[i].PidFile, givenMark)
		logfile[i] = logfile[i] || strings.HasSuffix(ns[i].LogFile, givenMark)
	}
	return pidfile, logfile, nil
}

// takeRecorded gives n what its record rec says of its running instance:
// the process (when rec is of n's pidfile), where its tree runs (whatever
// command comes next), and its kill mode unless n sets one.
func takeRecorded(n *nodes.Node, rec nodes.Node) {
	// Only a record of this pidfile says where this node's process and
	// tree run: given another pidfile, the node is its lock holder alone,
	// and a record's cgroup (another instance's tree, running or not)
	// must not be stopped, killed or counted as its.
	if n.PidFile == rec.PidFile {
		n.Recorded = rec.Recorded
		n.Cgroup = rec.Cgroup
	}
	if n.KillMode == "" {
		n.KillMode = rec.KillMode
	}
}

// ResolveNode is n with what [Resolve] takes from n's record in
// rundir whatever the spec says: the process the record names, where the
// node's tree runs (its cgroup) and its kill mode, unless n sets one. It
// serves a node built with [nodes.Spec.Nodes] before its start, as a library
// does, for the verbs that act on its running tree. A node that names a
// cgroup or a recorded process is returned as it is (resolved already),
// as is one whose record is of another pidfile or cannot be read.
func ResolveNode(rundir string, n nodes.Node) nodes.Node {
	if n.Cgroup != "" || n.Recorded.PID != 0 {
		return n
	}
	rec, _, err := readRecord(nil, rundir, n.Name)
	if err != nil || rec.PidFile != n.PidFile {
		return n
	}
	takeRecorded(&n, rec)
	return n
}
