package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/urfave/cli/v2"
)

// forgetCommand removes the records of stopped nodes, so that status and
// the verbs without names no longer list them.
func forgetCommand() *cli.Command {
	return grammarCommand(&cli.Command{
		Name:      "forget",
		Usage:     "remove the records of stopped nodes (refuses a running or lost one)",
		UsageText: "multi forget [flags] [NODES...]",
		Description: `A node's record (RUNDIR/NAME.node: its command, files and start time) is
kept after it stops, so that restart and status without names know it.
forget removes it. If any node given still runs, is lost or cannot be
inspected, nothing is removed: stop it first. Without NODES: every stopped
node of this project (started in this folder; --all: every recorded one),
the others kept and listed.

   multi forget w3 w4
   multi forget`,
		Flags: common(flagRundir, flagAll),
	}, forgetGrammar, func(c *cli.Context, a *call) (int, error) {
		cl, err := cluster(c, a)
		if err != nil {
			return exitUsage, err
		}
		code := exitOK
		o := newOutput(c, a)
		// A start holds a node's record lock from reading its record
		// until it has recorded its process: forget takes it too, from
		// before it checks the nodes until it has removed their records,
		// so that it never removes the record of a start not yet seen
		// running. In name order, so two forgets cannot hold each other up.
		locks := make(map[string]*record.Locked, len(cl.Nodes))
		defer func() {
			for _, lk := range locks {
				lk.Unlock()
			}
		}()
		names := make([]string, 0, len(cl.Nodes))
		for _, n := range cl.Nodes {
			names = append(names, n.Name)
		}
		slices.Sort(names)
		names = slices.Compact(names)
		if _, err := os.Stat(cl.RunDir); errors.Is(err, fs.ErrNotExist) {
			names = nil // no records to forget; and no rundir made to lock in
		}
		ctx, cancel := context.WithTimeout(c.Context, forgetLockWait)
		defer cancel()
		for _, name := range names {
			lk, err := record.Lock(ctx, cl.RunDir, name)
			if errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("record %s is being written (its lock held for over %s): try again", record.Path(cl.RunDir, name), forgetLockWait)
			}
			if err != nil {
				fmt.Fprintf(o.w, "%s: %s: %s\n", name, o.paint(red, "FAILED"), nodes.Printable(err.Error()))
				fmt.Fprintln(c.App.ErrWriter, "multi forget: nothing forgotten")
				return exitFailed, nil
			}
			locks[name] = lk
		}
		sts, _ := cl.Status(c.Context)
		refused := false
		kept := map[string]bool{} // without names: those not stopped
		for _, s := range sts {
			why := ""
			switch s.State {
			case multi.StateUnknown, multi.StateMismatch:
				why = statusErrText(s)
			case multi.StateLost:
				why = fmt.Sprintf("lost (pid %d runs without its pidfile's lock): stop it with multi stop --lost first", s.PID)
			case multi.StateLingering:
				why = fmt.Sprintf("lingering (%s left in its tree, which its record names): multi stopwait cleans them first", processes(s.Tree.Procs))
			case multi.StateRunning:
				why = fmt.Sprintf("running (pid %d): stop it first", s.PID)
			case multi.StateElsewhere:
				why = "running in another pid namespace: stop it first"
			}
			switch {
			case why != "" && len(a.Names) == 0:
				fmt.Fprintf(o.w, "%s: %s\n", s.Node.Name, o.paint(yellow, "kept: "+why))
				kept[s.Node.Name] = true
			case why != "":
				fmt.Fprintf(o.w, "%s: %s: %s\n", s.Node.Name, o.paint(red, "FAILED"), why)
				refused = true
			}
		}
		if refused {
			fmt.Fprintln(c.App.ErrWriter, "multi forget: nothing forgotten")
			return exitFailed, nil
		}
		for _, n := range cl.Nodes {
			if kept[n.Name] {
				continue
			}
			path := record.Path(cl.RunDir, n.Name)
			err := fmt.Errorf("record %s: %w", path, fs.ErrNotExist)
			if lk := locks[n.Name]; lk != nil {
				err = lk.Remove()
			}
			switch {
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

// forgetLockWait bounds how long forget waits for a node's record lock:
// a start holds it while it spawns, which for a self-locking node lasts
// up to its lock timeout (10 s by default).
const forgetLockWait = 15 * time.Second

// forgetGrammar: without names, every stopped node of this project (see
// projectNames); those still running are kept.
var forgetGrammar = grammar{project: true}
