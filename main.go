// Command multi starts named nodes (worker processes) in the background and
// stops them again without ever signalling the wrong process. See README.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/waiter"
	"github.com/urfave/cli/v2"
)

// Exit codes. status follows LSB instead: 0 all running, 1 a stale pidfile,
// 3 not running, 4 unknown.
const (
	exitOK      = 0
	exitFailed  = 1
	exitUsage   = 2
	exitStopped = 3
	exitUnknown = 4
)

var (
	flagPidfile = &cli.StringFlag{Name: "pidfile", Usage: "pidfile `TEMPLATE` (%n is the node name)", DefaultText: "RUNDIR/%n.pid"}
	flagLogfile = &cli.StringFlag{Name: "logfile", Usage: "logfile `TEMPLATE`; the node's stdout and stderr are appended to it", DefaultText: "RUNDIR/%n.log"}
	flagRundir  = &cli.StringFlag{Name: "rundir", Usage: "`DIR` of default pidfiles, logfiles and node records", EnvVars: []string{"MULTI_RUNDIR"}, DefaultText: "/run/multi as root, else $XDG_RUNTIME_DIR/multi or /tmp/multi-UID"}
	flagTimeout = &cli.StringFlag{Name: "timeout", Usage: "after `DURATION` (10s, 1m, or seconds) still running nodes get SIGKILL", DefaultText: "wait forever"}
	flagWait    = &cli.StringFlag{Name: "wait", Usage: "how to wait for locks to be released: poll or notify (fsnotify and pidfd wake-ups)", Value: "poll"}
	flagJSON    = &cli.BoolFlag{Name: "json", Usage: "print a JSON array, one object per node"}

	flagPrefix      = &cli.StringFlag{Name: "prefix", Usage: "put `TEXT` before every node name given (not counted ones)"}
	flagSuffix      = &cli.StringFlag{Name: "suffix", Usage: "the host part of full names, as celery's --suffix (\"\" for none); wins over --hostname"}
	flagHostname    = &cli.StringFlag{Name: "hostname", Usage: "the host part of full names (%h, %n, %d: this machine's)", DefaultText: "this machine's host name"}
	flagRangePrefix = &cli.StringFlag{Name: "range-prefix", Usage: "prefix of the names a count gives", Value: nodes.DefaultRangePrefix}
)

// withNames adds the flags that shape node names to a command's own flags.
func withNames(flags ...cli.Flag) []cli.Flag {
	return append(flags, flagPrefix, flagSuffix, flagHostname, flagRangePrefix)
}

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code := exitOK
	app := &cli.App{
		Name:      "multi",
		Usage:     "start named nodes in the background and stop them without signalling the wrong process",
		UsageText: "multi COMMAND [flags] NODES... [-SIGNAL] [-- COMMAND ARGS...]",
		Writer:    stdout,
		ErrWriter: stderr,
		Commands: []*cli.Command{
			verb("start", "start nodes: multi start w1 w2 -- CMD ARGS...", "multi start [flags] NODES... [OPTIONS] [-- COMMAND [ARG...]]", false,
				withNames(flagPidfile, flagLogfile, flagRundir), (*multi.Cluster).Start, &code),
			verb("stop", "send a signal (default TERM) and return", "multi stop [flags] [NODES...] [-SIGNAL]", true,
				withNames(flagPidfile, flagLogfile, flagRundir), (*multi.Cluster).Stop, &code),
			verb("stopwait", "send a signal, wait until each node's lock is released, remove the pidfiles", "multi stopwait [flags] [NODES...] [-SIGNAL]", true,
				withNames(flagPidfile, flagLogfile, flagRundir, flagTimeout, flagWait), (*multi.Cluster).StopWait, &code),
			verb("kill", "send KILL, wait until each node's lock is released, remove the pidfiles", "multi kill [flags] [NODES...]", false,
				withNames(flagPidfile, flagLogfile, flagRundir, flagWait), (*multi.Cluster).Kill, &code),
			verb("restart", "stopwait nodes, then start them again with their recorded command", "multi restart [flags] [NODES...] [-SIGNAL] [OPTIONS] [-- COMMAND [ARG...]]", true,
				withNames(flagPidfile, flagLogfile, flagRundir, flagTimeout, flagWait), (*multi.Cluster).Restart, &code),
			statusCommand(&code),
			namesCommand(),
			expandCommand(),
			showCommand("show", "print the command line each node would run, shell-quoted", "multi show [flags] NODES... [OPTIONS] [-- COMMAND [ARG...]]", &code),
			showCommand("get", "print the command line of the node FULLNAME (exit 1 if it is not in the set)", "multi get [flags] FULLNAME NODES... [OPTIONS] [-- COMMAND [ARG...]]", &code),
		},
		CommandNotFound: func(c *cli.Context, name string) {
			fmt.Fprintf(stderr, "multi: unknown command %q (see multi --help)\n", name)
			code = exitUsage
		},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return cli.Exit("multi: "+err.Error(), exitUsage)
		},
		ExitErrHandler: func(c *cli.Context, err error) {},
	}
	if len(args) < 2 {
		app.Writer = stderr
		app.Run(args[:1]) // shows the help
		return exitUsage
	}
	if err := app.RunContext(ctx, args); err != nil {
		fmt.Fprintln(stderr, err)
		var ec cli.ExitCoder
		if errors.As(err, &ec) {
			return ec.ExitCode()
		}
		return exitUsage
	}
	return code
}

// parseCommand parses a verb's arguments with multi's grammar, driven by
// the flags the verb declares.
func parseCommand(c *cli.Context, withSignal bool) (*nodes.Args, error) {
	p := nodes.Parser{Flags: map[string]bool{}, PerNode: map[string]bool{"pidfile": true, "logfile": true}, Forward: true}
	for _, f := range c.Command.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, name := range f.Names() {
			p.Flags[name] = !isBool
		}
	}
	p.Signal = func(s string) bool { _, err := multi.ParseSignal(s); return err == nil }
	p.NoSignal = !withSignal
	a, err := p.Parse(c.Args().Slice())
	if errors.Is(err, nodes.ErrHelp) {
		cli.HelpPrinter(c.App.Writer, cli.CommandHelpTemplate, c.Command)
		return nil, cli.Exit("", exitOK)
	}
	if err != nil {
		return nil, usage(c, err)
	}
	return a, nil
}

// usage is a one-line usage error naming the verb, with exit code 2.
func usage(c *cli.Context, err error) error {
	msg := strings.TrimPrefix(err.Error(), nodes.ErrUsage.Error()+": ")
	return cli.Exit(fmt.Sprintf("multi %s: %s\nusage: %s", c.Command.Name, msg, c.Command.UsageText), exitUsage)
}

// cluster builds the set of nodes and the cluster from parsed arguments.
func cluster(c *cli.Context, a *nodes.Args) (*multi.Cluster, error) {
	ns, err := resolve(c, a)
	if err != nil {
		return nil, err
	}
	cl := &multi.Cluster{Nodes: ns, RunDir: rundir(a)}
	if a.Signal != "" {
		if cl.Signal, err = multi.ParseSignal(a.Signal); err != nil {
			return nil, usage(c, err)
		}
	}
	if t := a.Flags["timeout"]; t != "" {
		if cl.Timeout, err = parseTimeout(t); err != nil {
			return nil, usage(c, err)
		}
	}
	switch a.Flags["wait"] {
	case "", "poll":
		cl.Wait = waiter.Poll{}
	case "notify":
		cl.Wait = waiter.Notify{}
	default:
		return nil, usage(c, fmt.Errorf("--wait is poll or notify, not %q", a.Flags["wait"]))
	}
	return cl, nil
}

// rundir is --rundir, else $MULTI_RUNDIR, else the default.
func rundir(a *nodes.Args) string {
	if d := a.Flags["rundir"]; d != "" {
		return d
	}
	return nodes.DefaultRunDir()
}

// resolve builds the set of nodes from parsed arguments and the records.
func resolve(c *cli.Context, a *nodes.Args) ([]nodes.Node, error) {
	spec := nodes.Spec{
		Names:       a.Names,
		Prefix:      a.Flags["prefix"],
		Host:        a.Flags["hostname"],
		RangePrefix: a.Flags["range-prefix"],
		RunDir:      rundir(a),
		PidFile:     a.Flags["pidfile"],
		LogFile:     a.Flags["logfile"],
		NodeFiles:   a.NodeFlags,
		Options:     a.Options,
		Command:     a.Command,
	}
	if s, ok := a.Flags["suffix"]; ok {
		spec.Host = s
		if s == "" {
			spec.Host = `""`
		}
	}
	name := c.Command.Name
	if name == "start" && len(a.Names) == 0 {
		return nil, usage(c, errors.New("no nodes given"))
	}
	if a.HasCommand && len(a.Command) == 0 {
		return nil, usage(c, errors.New("no command after --"))
	}
	if a.HasCommand && name != "start" && name != "restart" && name != "show" && name != "get" {
		return nil, usage(c, errors.New("a command after -- only goes with start, restart, show and get"))
	}
	ns, err := spec.Resolve()
	if err != nil {
		return nil, usage(c, err)
	}
	return ns, nil
}

func parseTimeout(s string) (time.Duration, error) {
	if n, err := strconv.ParseFloat(s, 64); err == nil && n > 0 {
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("--timeout wants a positive duration (10s, 1m30s) or seconds, not %q", s)
	}
	return d, nil
}

// verb builds a lifecycle command: parse, build the cluster, call one
// method, print a line per node, map failures to exit code 1.
func verb(name, usageLine, usageText string, withSignal bool, flags []cli.Flag,
	do func(*multi.Cluster, context.Context) ([]multi.Result, error), code *int) *cli.Command {
	return &cli.Command{
		Name:            name,
		Usage:           usageLine,
		UsageText:       usageText,
		Flags:           flags,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			a, err := parseCommand(c, withSignal)
			if err != nil {
				return err
			}
			cl, err := cluster(c, a)
			if err != nil {
				return err
			}
			results, err := do(cl, c.Context)
			for _, r := range results {
				if r.Warning != "" {
					fmt.Fprintf(c.App.ErrWriter, "%s: warning: %s\n", r.Node.Name, r.Warning)
				}
				if r.Err != nil && errors.Is(r.Err, multi.ErrAlreadyRunning) {
					// Starting what already runs is done, as LSB init
					// scripts have it.
					fmt.Fprintf(c.App.Writer, "%s: %s\n", r.Node.Name, r.Msg)
					continue
				}
				fmt.Fprintln(c.App.Writer, r.String())
			}
			if err != nil && !onlyAlreadyRunning(results) {
				*code = exitFailed
			}
			return nil
		},
	}
}

func onlyAlreadyRunning(results []multi.Result) bool {
	for _, r := range results {
		if r.Err != nil && !errors.Is(r.Err, multi.ErrAlreadyRunning) {
			return false
		}
	}
	return true
}

// statusJSON is one node in status --json.
type statusJSON struct {
	Name     string `json:"name"`
	FullName string `json:"fullname"`
	State    string `json:"state"`
	PID      int    `json:"pid"`
	FilePID  int    `json:"file_pid"`
	PidFile  string `json:"pidfile"`
	LogFile  string `json:"logfile"`
	Error    string `json:"error,omitempty"`
}

func statusCommand(code *int) *cli.Command {
	return &cli.Command{
		Name:            "status",
		Usage:           "show each node's state from its pidfile's lock (exit 0 all running, 1 stale, 3 stopped)",
		UsageText:       "multi status [flags] [NODES...] [--json]",
		Flags:           withNames(flagPidfile, flagLogfile, flagRundir, flagJSON),
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			a, err := parseCommand(c, false)
			if err != nil {
				return err
			}
			cl, err := cluster(c, a)
			if err != nil {
				return err
			}
			sts, _ := cl.Status(c.Context)
			*code = statusCode(sts)
			if a.Flags["json"] == "true" {
				out := make([]statusJSON, len(sts))
				for i, s := range sts {
					out[i] = statusJSON{Name: s.Node.Name, FullName: s.Node.FullName(), State: s.State.String(),
						PID: s.PID, FilePID: s.FilePID, PidFile: s.Node.PidFile, LogFile: s.Node.LogFile}
					if s.Err != nil {
						out[i].State, out[i].Error = "unknown", s.Err.Error()
					}
				}
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			for _, s := range sts {
				fmt.Fprintln(c.App.Writer, s.Node.Name+": "+describeStatus(s))
			}
			return nil
		},
	}
}

func describeStatus(s multi.Status) string {
	switch {
	case s.Err != nil:
		return "unknown: " + strings.TrimPrefix(s.Err.Error(), "multi: status "+s.Node.Name+": ")
	case s.State == nodes.Running && s.Mismatch():
		return fmt.Sprintf("running (pid %d; the pidfile's text disagrees, the lock holder is the truth)", s.PID)
	case s.State == nodes.Running:
		return fmt.Sprintf("running (pid %d)", s.PID)
	case s.State == nodes.Stale:
		return "stale (pidfile " + s.Node.PidFile + " left behind; no process holds its lock)"
	case s.State == nodes.Elsewhere:
		return "running in another pid namespace (holder not visible from here)"
	}
	return "stopped"
}

// statusCode maps node states to LSB status codes: the worst one wins.
func statusCode(sts []multi.Status) int {
	code := exitOK
	for _, s := range sts {
		switch {
		case s.Err != nil:
			return exitUnknown
		case s.State == nodes.Stale:
			code = exitFailed
		case s.State == nodes.Absent && code == exitOK:
			code = exitStopped
		}
	}
	return code
}

// namesCommand prints each node's full name, as celery multi names.
func namesCommand() *cli.Command {
	return &cli.Command{
		Name:            "names",
		Usage:           "print each node's full name, one per line",
		UsageText:       "multi names [flags] NODES...",
		Flags:           withNames(flagRundir),
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			a, err := parseCommand(c, false)
			if err != nil {
				return err
			}
			ns, err := resolve(c, a)
			if err != nil {
				return err
			}
			for _, n := range ns {
				fmt.Fprintln(c.App.Writer, n.FullName())
			}
			return nil
		},
	}
}

// expandCommand prints a template expanded for each node, as celery multi
// expand.
func expandCommand() *cli.Command {
	return &cli.Command{
		Name:            "expand",
		Usage:           "print TEMPLATE expanded for each node, one per line",
		UsageText:       "multi expand [flags] TEMPLATE NODES...",
		Flags:           withNames(flagRundir),
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			a, err := parseCommand(c, false)
			if err != nil {
				return err
			}
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
		},
	}
}

// showCommand is show (every node's command line) or get (one node's).
func showCommand(name, usageLine, usageText string, code *int) *cli.Command {
	return &cli.Command{
		Name:            name,
		Usage:           usageLine,
		UsageText:       usageText,
		Flags:           withNames(flagPidfile, flagLogfile, flagRundir),
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			a, err := parseCommand(c, false)
			if err != nil {
				return err
			}
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
				fmt.Fprintln(c.App.Writer, nodes.Quote(n.Command))
			}
			if !found {
				fmt.Fprintf(c.App.ErrWriter, "multi get: no node %s in the set\n", want)
				*code = exitFailed
			}
			return nil
		},
	}
}
