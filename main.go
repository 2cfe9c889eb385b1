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
)

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
			verb("start", "start nodes: multi start w1 w2 -- CMD ARGS...", "multi start [flags] NODES... [-- COMMAND [ARG...]]", false,
				[]cli.Flag{flagPidfile, flagLogfile, flagRundir}, (*multi.Cluster).Start, &code),
			verb("stop", "send a signal (default TERM) and return", "multi stop [flags] [NODES...] [-SIGNAL]", true,
				[]cli.Flag{flagPidfile, flagRundir}, (*multi.Cluster).Stop, &code),
			verb("stopwait", "send a signal, wait until each node's lock is released, remove the pidfiles", "multi stopwait [flags] [NODES...] [-SIGNAL]", true,
				[]cli.Flag{flagPidfile, flagRundir, flagTimeout, flagWait}, (*multi.Cluster).StopWait, &code),
			verb("kill", "send KILL, wait until each node's lock is released, remove the pidfiles", "multi kill [flags] [NODES...]", false,
				[]cli.Flag{flagPidfile, flagRundir, flagWait}, (*multi.Cluster).Kill, &code),
			verb("restart", "stopwait nodes, then start them again with their recorded command", "multi restart [flags] [NODES...] [-SIGNAL]", true,
				[]cli.Flag{flagPidfile, flagLogfile, flagRundir, flagTimeout, flagWait}, (*multi.Cluster).Restart, &code),
			statusCommand(&code),
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
	p := nodes.Parser{Flags: map[string]bool{}}
	for _, f := range c.Command.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, name := range f.Names() {
			p.Flags[name] = !isBool
		}
	}
	if withSignal {
		p.Signal = func(s string) bool { _, err := multi.ParseSignal(s); return err == nil }
	}
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
	spec := nodes.Spec{
		Names:   a.Names,
		RunDir:  a.Flags["rundir"],
		PidFile: a.Flags["pidfile"],
		LogFile: a.Flags["logfile"],
		Command: a.Command,
	}
	if spec.RunDir == "" {
		spec.RunDir = nodes.DefaultRunDir()
	}
	if c.Command.Name == "start" && !a.HasCommand && len(a.Names) == 0 {
		return nil, usage(c, errors.New("no nodes given"))
	}
	if a.HasCommand && len(a.Command) == 0 {
		return nil, usage(c, errors.New("no command after --"))
	}
	if a.HasCommand && c.Command.Name != "start" && c.Command.Name != "restart" {
		return nil, usage(c, errors.New("a command after -- only goes with start and restart"))
	}
	ns, err := spec.Resolve()
	if err != nil {
		return nil, usage(c, err)
	}
	cl := &multi.Cluster{Nodes: ns, RunDir: spec.RunDir}
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
		Flags:           []cli.Flag{flagPidfile, flagLogfile, flagRundir, flagJSON},
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
