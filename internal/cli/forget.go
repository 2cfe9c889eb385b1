package cli

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
	"github.com/urfave/cli/v2"
)

// forgetCommand removes the records of stopped nodes, so that status and
// the verbs without names no longer list them.
func forgetCommand() *cli.Command {
	return grammarCommand(&cli.Command{
		Name:      "forget",
		Usage:     "remove the records of stopped nodes (refuses a running or lost one)",
		UsageText: "multi forget [flags] NODES...",
		Description: `A node's record (RUNDIR/NAME.node: its command, files and start time) is
kept after it stops, so that restart and status without names know it.
forget removes it. If any node given still runs, is lost or cannot be
inspected, nothing is removed: stop it first.

   multi forget w3 w4`,
		Flags: common(flagRundir),
	}, forgetGrammar, func(c *cli.Context, a *call) (int, error) {
		cl, err := cluster(c, a)
		if err != nil {
			return exitUsage, err
		}
		code := exitOK
		o := newOutput(c, a)
		sts, _ := cl.Status(c.Context)
		refused := false
		for _, s := range sts {
			why := ""
			switch {
			case s.Err != nil:
				why = statusErrText(s)
			case s.Lost != nil:
				why = fmt.Sprintf("lost (pid %d runs without its pidfile's lock): stop it with multi stop --lost first", s.Lost.PID)
			case s.State == pidfile.Running:
				why = fmt.Sprintf("running (pid %d): stop it first", s.PID)
			case s.State == pidfile.Elsewhere:
				why = "running in another pid namespace: stop it first"
			}
			if why != "" {
				fmt.Fprintf(o.w, "%s: %s: %s\n", s.Node.Name, o.paint(red, "FAILED"), why)
				refused = true
			}
		}
		if refused {
			fmt.Fprintln(c.App.ErrWriter, "multi forget: nothing forgotten")
			return exitFailed, nil
		}
		for _, n := range cl.Nodes {
			path := nodes.RecordPath(cl.RunDir, n.Name)
			switch err := nodes.RemoveRecord(cl.RunDir, n.Name); {
			case errors.Is(err, fs.ErrNotExist):
				fmt.Fprintf(o.w, "%s: %s\n", n.Name, o.paint(yellow, "no record ("+nodes.Printable(path)+")"))
			case err != nil:
				fmt.Fprintf(o.w, "%s: %s: %s\n", n.Name, o.paint(red, "FAILED"), nodes.Printable(err.Error()))
				code = exitFailed
			case !o.quiet:
				fmt.Fprintf(o.w, "%s: %s (%s removed)\n", n.Name, o.paint(green, "forgotten"), nodes.Printable(path))
			}
		}
		return code, nil
	})
}

// forgetGrammar: without names every recorded node would be meant, too
// much to forget by accident.
var forgetGrammar = grammar{names: true}
