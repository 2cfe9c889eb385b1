package cli

import (
	"errors"
	"fmt"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/urfave/cli/v2"
)

// namesCommand prints each node's full name, as celery multi names.
func namesCommand() *cli.Command {
	return grammarCommand(&cli.Command{
		Name:        "names",
		Usage:       "print each node's full name, one per line",
		UsageText:   "multi names [flags] NODES...",
		Description: "   multi names 3 --range-prefix=web\n   multi names w1 w2 --suffix=example.com",
		Flags:       common(flagRundir),
	}, grammar{}, func(c *cli.Context, a *call) (int, error) {
		ns, err := resolve(c, a)
		if err != nil {
			return exitUsage, err
		}
		for _, n := range ns {
			fmt.Fprintln(c.App.Writer, n.FullName())
		}
		return exitOK, nil
	})
}

// expandCommand prints a template expanded for each node, as celery multi
// expand.
func expandCommand() *cli.Command {
	return grammarCommand(&cli.Command{
		Name:      "expand",
		Usage:     "print TEMPLATE expanded for each node, one per line",
		UsageText: "multi expand [flags] TEMPLATE NODES...",
		Description: `Letters: %n short name, %h full name, %d host part, %i index, %% a %.

   multi expand /run/app/%n.pid 3`,
		Flags: common(flagRundir),
	}, grammar{}, func(c *cli.Context, a *call) (int, error) {
		if len(a.Names) == 0 {
			return exitUsage, usage(c, errors.New("no template given"))
		}
		tmpl := a.Names[0]
		a.Names = a.Names[1:]
		ns, err := resolve(c, a)
		if err != nil {
			return exitUsage, err
		}
		for _, n := range ns {
			s, err := nodes.Expand(tmpl, n)
			if err != nil {
				return exitUsage, usage(c, err)
			}
			fmt.Fprintln(c.App.Writer, s)
		}
		return exitOK, nil
	})
}

// showGrammar: show and get print the command a node would run, so they
// take what start takes for it.
var showGrammar = grammar{forward: true}

// showCommand is show: every node's command line.
func showCommand() *cli.Command {
	return grammarCommand(&cli.Command{
		Name:        "show",
		Usage:       "print the command line each node would run, shell-quoted",
		UsageText:   "multi show [flags] NODES... [OPTIONS] [-- COMMAND [ARG...]]",
		Description: "   multi show A B C D -c:1 4 -c:2-4 8 -- worker\n   multi show w1     # the recorded command",
		Flags:       common(flagPidfile, flagLogfile, flagRundir),
	}, showGrammar, func(c *cli.Context, a *call) (int, error) {
		return show(c, a, "")
	})
}

// getCommand is get: one node's command line.
func getCommand() *cli.Command {
	return grammarCommand(&cli.Command{
		Name:        "get",
		Usage:       "print the command line of the node FULLNAME (exit 1 if it is not in the set)",
		UsageText:   "multi get [flags] FULLNAME NODES... [OPTIONS] [-- COMMAND [ARG...]]",
		Description: "   multi get w2@myhost w1 w2 w3 -- worker %n",
		Flags:       common(flagPidfile, flagLogfile, flagRundir),
	}, showGrammar, func(c *cli.Context, a *call) (int, error) {
		if len(a.Names) == 0 {
			return exitUsage, usage(c, errors.New("no node name given"))
		}
		want := a.Names[0]
		a.Names = a.Names[1:]
		return show(c, a, want)
	})
}

// show prints the command line of each node, or of the one named want
// (a full name) if want is not "".
func show(c *cli.Context, a *call, want string) (int, error) {
	code := exitOK
	ns, err := resolve(c, a)
	if err != nil {
		return exitUsage, err
	}
	o := newOutput(c, a)
	found := false
	for _, n := range ns {
		if want != "" && n.FullName() != want {
			continue
		}
		found = true
		if len(n.Command) == 0 {
			fmt.Fprintf(c.App.ErrWriter, "%s: FAILED: %v\n", n.Name, multi.ErrNoCommand)
			code = exitFailed
			continue
		}
		if o.verbose {
			o.describe(n)
			continue
		}
		fmt.Fprintln(c.App.Writer, nodes.Quote(n.Command))
	}
	if !found {
		fmt.Fprintf(c.App.ErrWriter, "multi get: no node %s in the set\n", want)
		code = exitFailed
	}
	return code, nil
}
