package multi

import (
	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/nodes"
)

// A Placement says how this process would contain the nodes it starts
// in a rundir: Mode [InCgroup] (each node's whole process tree in a
// cgroup v2 folder of its own, under Cgroup) or [InSession]; Why says
// why, and for InSession why not InCgroup. Run says what multi run does
// with its own process first: moves into a leaf cgroup of its own
// (RunLeaf) where its cgroup holds other processes or is the root of a
// container's cgroup namespace, and why.
type Placement struct {
	Mode    Containment
	Cgroup  string
	Why     string
	RunLeaf string
	Run     string
}

// CheckContainment returns the containment this process gives the nodes
// of rundir ("" for the default) when it starts them. It makes the
// rundir's cgroup folder to learn whether it can, and removes it again
// when no node is in it.
func CheckContainment(rundir string) Placement {
	if rundir == "" {
		rundir = nodes.DefaultRunDir()
	}
	cg := cgroup.Detect(rundir)
	p := cgroup.RunPlacement(rundir)
	if cg.Mode == cgroup.Cgroup {
		cgroup.RemoveParent(cg.Parent)
	}
	return Placement{Mode: Containment(cg.Mode), Cgroup: cg.Parent, Why: cg.Why, RunLeaf: p.Leaf, Run: p.Why}
}
