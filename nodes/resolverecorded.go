package nodes

// takeRecorded gives n what its record rec says of its running instance:
// the process (when rec is of n's pidfile), where its tree runs (whatever
// command comes next), and its kill mode unless n sets one.
func (n *Node) takeRecorded(rec Node) {
	// Only a record of this pidfile says where this node's process and
	// tree run: given another pidfile, the node is its lock holder alone,
	// and a record's cgroup (another instance's tree, running or not)
	// must not be stopped, killed or counted as its.
	if n.PidFile == rec.PidFile {
		n.recorded = rec.recorded
		n.Cgroup = rec.Cgroup
	}
	if n.KillMode == "" {
		n.KillMode = rec.KillMode
	}
}

// ResolveRecorded is n with what [Spec.Resolve] takes from n's record in
// rundir whatever the spec says: the process the record names, where the
// node's tree runs (its cgroup) and its kill mode, unless n sets one. It
// serves a node built with [Spec.Nodes] before its start, as a library
// does, for the verbs that act on its running tree. A node that names a
// cgroup or a recorded process is returned as it is (resolved already),
// as is one whose record is of another pidfile or cannot be read.
func ResolveRecorded(rundir string, n Node) Node {
	if n.Cgroup != "" || n.recorded.PID != 0 {
		return n
	}
	rec, _, err := readRecord(nil, rundir, n.Name)
	if err != nil || rec.PidFile != n.PidFile {
		return n
	}
	n.takeRecorded(rec)
	return n
}
