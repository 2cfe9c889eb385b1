package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/multi-launcher/multi/multi"
	"github.com/urfave/cli/v2"
)

// parseCommand parses a verb's arguments with multi's grammar, driven by
// the flags the verb declares.
func parseCommand(c *cli.Context, withSignal bool) (*Args, error) {
	p := Parser{Flags: map[string]bool{}, Short: map[string]string{},
		PerNode: map[string]bool{"pidfile": true, "logfile": true}, Forward: runsCommand(c.Command.Name)}
	for _, f := range c.Command.Flags {
		_, isBool := f.(*cli.BoolFlag)
		names := f.Names()
		for _, name := range names {
			if len(name) == 1 {
				p.Short[name] = names[0]
			} else {
				p.Flags[name] = !isBool
			}
		}
	}
	p.Signal = func(s string) bool { _, err := multi.ParseSignal(s); return err == nil }
	p.NoSignal = !withSignal
	a, err := p.Parse(c.Args().Slice())
	if errors.Is(err, ErrHelp) {
		cli.HelpPrinter(c.App.Writer, cli.CommandHelpTemplate, c.Command)
		return nil, cli.Exit("", exitOK)
	}
	if err != nil {
		return nil, usage(c, err)
	}
	return a, nil
}

// runsCommand reports whether the verb runs the nodes' command (or prints
// it): only those take a "-- COMMAND" and options to pass on to it; the
// others refuse both, so that a misspelt flag is never ignored.
func runsCommand(verb string) bool {
	switch verb {
	case "start", "run", "restart", "show", "get":
		return true
	}
	return false
}

// grammarCommand makes cmd a command whose arguments follow multi's
// grammar rather than urfave/cli's: urfave/cli parses none of them (so
// that "-c:1 4" and "-- COMMAND" reach the verb whole), parseCommand
// does, driven by cmd.Flags, and run gets the result.
func grammarCommand(cmd *cli.Command, withSignal bool, run func(*cli.Context, *Args) error) *cli.Command {
	cmd.SkipFlagParsing = true
	cmd.Action = func(c *cli.Context) error {
		a, err := parseCommand(c, withSignal)
		if err != nil {
			return err
		}
		return run(c, a)
	}
	return cmd
}

// usage is a usage error naming the verb, with the verb's usage line, and
// exit code 2.
func usage(c *cli.Context, err error) error {
	msg := strings.TrimPrefix(err.Error(), ErrUsage.Error()+": ")
	return cli.Exit(fmt.Sprintf("multi %s: %s\nusage: %s", c.Command.Name, msg, c.Command.UsageText), exitUsage)
}
