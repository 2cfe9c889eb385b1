package cli

import (
	"fmt"

	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/urfave/cli/v2"
)

// checkCommand says, for this user and rundir, how nodes would be
// contained (a cgroup each, or their session) and why not the other way.
func checkCommand() *cli.Command {
	return grammarCommand(&cli.Command{
		Name:      "check",
		Usage:     "say how nodes started here are contained: a cgroup each, or their session, and why",
		UsageText: "multi check [flags]",
		Description: `Where multi can make and own a cgroup v2 folder (root; a user in a
subtree delegated to it; a container with a writable cgroup namespace),
each node's whole process tree runs in a cgroup of its own and stops as
systemd's KillMode=mixed. Otherwise (no cgroup2 mounted, read-only, not
delegated, no cgroup.kill before Linux 5.14, MULTI_CONTAINMENT=session)
a node is its lock holder and its session: the members of its session,
found in /proc, are counted and stopped as a cgroup's are, but one that
left the session (setsid) is not found. check says which applies, for
this user and rundir, and why not the other; and which cgroup v2 limits
(--memory-max, --memory-high, --cpu-max, --pids-max) a start can apply
here, and why not: each needs its controller in the cgroup.controllers of
the rundir's cgroup folder, and a start given one that cannot apply fails.

   multi check`,
		Flags: common(flagRundir),
	}, grammar{}, func(c *cli.Context, a *call) (int, error) {
		// It makes the rundir's cgroup folder to learn whether it can, and
		// removes it again when no node is in it.
		dir := rundir(a)
		cg := cgroup.Detect(dir)
		run := cgroup.RunPlacement(dir)
		var limits []string
		for _, l := range cgroupLimitFlags {
			if err := cg.Available(l.controller); err != nil {
				limits = append(limits, fmt.Sprintf("%s: %v", l.flags, err))
			} else {
				limits = append(limits, fmt.Sprintf("%s: available (the %s controller, enabled for each node's cgroup)", l.flags, l.controller))
			}
		}
		if cg.Mode == cgroup.Cgroup {
			cgroup.RemoveParent(cg.Parent)
		}
		w := c.App.Writer
		fmt.Fprintf(w, "containment: %s\n", cg.Mode)
		if cg.Mode == cgroup.Cgroup {
			fmt.Fprintf(w, "cgroup: %s/NODE\n", cg.Parent)
			fmt.Fprintf(w, "why: %s\n", cg.Why)
		} else {
			fmt.Fprintf(w, "why not cgroup: %s\n", cg.Why)
		}
		if run.Leaf != "" {
			fmt.Fprintf(w, "multi run: moves itself into %s first: %s\n", run.Leaf, run.Why)
		} else if cg.Mode == cgroup.Cgroup {
			fmt.Fprintf(w, "multi run: stays in its cgroup: %s\n", run.Why)
		}
		for _, l := range limits {
			fmt.Fprintln(w, l)
		}
		return exitOK, nil
	})
}

// cgroupLimitFlags are the flags of the cgroup v2 limits, by controller.
var cgroupLimitFlags = []struct{ controller, flags string }{
	{"memory", "--memory-max, --memory-high"},
	{"cpu", "--cpu-max"},
	{"pids", "--pids-max"},
}
