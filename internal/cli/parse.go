package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/nodes"
	"github.com/urfave/cli/v2"
)

// A grammar is what a verb declares about its arguments besides its
// flags: parsing and resolving act on it, never on the verb's name.
type grammar struct {
	// signal: the verb takes a -SIGNAL.
	signal bool
	// endsNodes: the verb waits until the signalled nodes end, so a
	// signal that only stops them (STOP, TSTP) would wait forever.
	endsNodes bool
	// forward: the verb runs the nodes' command (or prints it), so it
	// takes options to pass on to it and "-- COMMAND"; the others refuse
	// both, so that a misspelt flag is never ignored.
	forward bool
	// starts: the verb starts nodes, so each needs a command, and the
	// working folder is recorded with them.
	starts bool
	// names: the verb needs at least one node name.
	names bool
	// project: the verb acts on recorded nodes, so a count reaches this
	// project's only (see otherProjects).
	project bool
}

// A call is what a verb is given: its command line parsed with multi's
// grammar, multi's own flags typed.
type call struct {
	flags
	grammar
	// Names are the node names, or a count, as given.
	Names []string
	// NodeFiles are the flags given per node (--pidfile:w1=PATH).
	NodeFiles []nodes.Option
	// Options are the options for the nodes' command, in order.
	Options []nodes.Option
	// Command is everything after "--"; HasCommand whether "--" was given.
	Command    []string
	HasCommand bool
	// given holds the long names of the flags given on the command line.
	given map[string]bool
	// file is the project file the nodes came from, nil if none.
	file *projectFile
}

// parseCommand parses a verb's arguments with multi's grammar, driven by
// the flags the verb declares, and types multi's own flags.
func parseCommand(c *cli.Context, g grammar) (*call, error) {
	p := Parser{Flags: map[string]bool{}, Short: map[string]string{}, PerNode: map[string]bool{}, Forward: g.forward}
	typed := map[string]typedFlag{}
	for _, f := range c.Command.Flags {
		// Every flag is one of flags.go's, but urfave/cli's --help.
		tf, _ := f.(typedFlag)
		names := f.Names()
		if tf != nil {
			typed[names[0]] = tf
			p.PerNode[names[0]] = tf.perNode()
		}
		for _, name := range names {
			if len(name) == 1 {
				p.Short[name] = names[0]
			} else {
				p.Flags[name] = tf != nil && tf.TakesValue()
			}
		}
	}
	p.Others = otherFlags(c)
	p.Signal = func(s string) bool { _, err := pin.ParseSignal(s); return err == nil }
	p.NoSignal = !g.signal
	a, err := p.Parse(c.Args().Slice())
	if errors.Is(err, ErrHelp) {
		cli.HelpPrinter(c.App.Writer, cli.CommandHelpTemplate, c.Command)
		return nil, cli.Exit("", exitOK)
	}
	if err != nil {
		return nil, usage(c, err)
	}
	k := &call{grammar: g, Names: a.Names, NodeFiles: a.NodeFlags, Options: a.Options, Command: a.Command, HasCommand: a.HasCommand}
	for _, f := range typed {
		if v := f.GetValue(); v != "" {
			if err := f.store(&k.flags, v); err != nil {
				return nil, usage(c, err)
			}
		}
	}
	last := map[string]int{}
	k.given = map[string]bool{}
	for i, given := range a.Flags {
		last[given.Name] = i
		k.given[given.Name] = true
	}
	for i, given := range a.Flags {
		f, v := typed[given.Name], given.Value
		if f == nil || i != last[given.Name] && !f.repeats() {
			continue // --help, which the parser answers; or given again later
		}
		if v == "" && f.GetValue() != "" {
			v = f.GetValue() // given empty: the default
		}
		if err := f.store(&k.flags, v); err != nil {
			return nil, usage(c, err)
		}
	}
	if a.Signal != "" {
		k.SignalText = a.Signal
		k.Signal, _ = pin.ParseSignal(a.Signal) // the parser checked it
		if g.endsNodes && pin.IsStopSignal(k.Signal) {
			return nil, usage(c, fmt.Errorf("-%s stops a node without ending it: %s would wait forever", a.Signal, c.Command.Name))
		}
	}
	return k, nil
}

// otherFlags are the long flags of the app and its other verbs that c's
// verb does not take, each with the verbs that take it.
func otherFlags(c *cli.Context) map[string][]string {
	own := map[string]bool{}
	for _, f := range c.Command.Flags {
		for _, name := range f.Names() {
			own[name] = true
		}
	}
	others := map[string][]string{}
	add := func(where string, fs []cli.Flag) {
		for _, f := range fs {
			for _, name := range f.Names() {
				if len(name) > 1 && !own[name] && !slices.Contains(others[name], where) {
					others[name] = append(others[name], where)
				}
			}
		}
	}
	add("multi", c.App.VisibleFlags())
	for _, cmd := range c.App.Commands {
		if cmd.Name != c.Command.Name {
			add(cmd.Name, cmd.Flags)
		}
	}
	return others
}

// grammarCommand makes cmd a command whose arguments follow multi's
// grammar rather than urfave/cli's: urfave/cli parses none of them (so
// that "-c:1 4" and "-- COMMAND" reach the verb whole), parseCommand
// does, driven by cmd.Flags and g, and run gets the result and returns
// the exit code.
func grammarCommand(cmd *cli.Command, g grammar, run func(*cli.Context, *call) (int, error)) *cli.Command {
	cmd.SkipFlagParsing = true
	cmd.Action = func(c *cli.Context) error {
		a, err := parseCommand(c, g)
		if err != nil {
			return err
		}
		code, err := run(c, a)
		c.App.Metadata[exitCode] = code
		return err
	}
	return cmd
}

// exitCode, in the app's Metadata, is the exit code the verb returned.
const exitCode = "exit-code"

// usage is a usage error naming the verb, with the verb's usage line, and
// exit code 2.
func usage(c *cli.Context, err error) error {
	// It can quote what was typed (an unknown flag): escaped.
	msg := nodes.Printable(strings.TrimPrefix(err.Error(), ErrUsage.Error()+": "))
	return cli.Exit(fmt.Sprintf("multi %s: %s\nusage: %s", c.Command.Name, msg, c.Command.UsageText), exitUsage)
}
