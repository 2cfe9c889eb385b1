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
	}, false, func(c *cli.Context, a *Args) error {
		ns, err := resolve(c, a)
		if err != nil {
			return err
		}
		for _, n := range ns {
			fmt.Fprintln(c.App.Writer, n.FullName())
		}
		return nil
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
	}, false, func(c *cli.Context, a *Args) error {
		if len(a.Names) == 0 {
			return usage(c, errors.New("no template given"))
		}
		tmpl := a.Names[0]
		a.Names = a.Names[1:]
		ns, err := resolve(c, a)
		if err != nil {
			return err
		}
		for _, n := range ns {
			s, err := nodes.Expand(tmpl, n)
			if err != nil {
				return usage(c, err)
			}
			fmt.Fprintln(c.App.Writer, s)
		}
		return nil
	})
}

// showCommand is show (every node's command line) or get (one node's).
func showCommand(name, usageLine, usageText, description string, code *int) *cli.Command {
	return grammarCommand(&cli.Command{
		Name:        name,
		Usage:       usageLine,
		UsageText:   usageText,
		Description: description,
		Flags:       common(flagPidfile, flagLogfile, flagRundir),
	}, false, func(c *cli.Context, a *Args) error {
		want := ""
		if name == "get" {
			if len(a.Names) == 0 {
				return usage(c, errors.New("no node name given"))
			}
			want, a.Names = a.Names[0], a.Names[1:]
		}
		ns, err := resolve(c, a)
		if err != nil {
			return err
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
				*code = exitFailed
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
			*code = exitFailed
		}
		return nil
	})
}
