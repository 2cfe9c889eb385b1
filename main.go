// Command multi starts named nodes (worker processes) in the background and
// stops them again without ever signalling the wrong process. See README.md
// and "multi help".
//
// main only parses the command line, builds the set of nodes, calls one
// method of package multi and prints its results; the work is in the
// packages multi, nodes and waiter.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/fsnotify/fsnotify"
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
	flagPidfile = &cli.StringFlag{Name: "pidfile", Usage: "pidfile `TEMPLATE` (%n is the node name); per node: --pidfile:w1=PATH", DefaultText: "RUNDIR/%n.pid"}
	flagLogfile = &cli.StringFlag{Name: "logfile", Usage: "logfile `TEMPLATE`; the node's stdout and stderr are appended to it", DefaultText: "RUNDIR/%n.log"}
	flagRundir  = &cli.StringFlag{Name: "rundir", Usage: "`DIR` of default pidfiles, logfiles and node records", EnvVars: []string{"MULTI_RUNDIR"}, DefaultText: "/run/multi as root, else $XDG_RUNTIME_DIR/multi or /tmp/multi-UID"}
	flagTimeout = &cli.StringFlag{Name: "timeout", Usage: "after `DURATION` (10s, 1m, or seconds) nodes still running get SIGKILL", DefaultText: "wait forever"}
	flagWait    = &cli.StringFlag{Name: "wait", Usage: "how to wait for locks to be released: `MODE` poll, or notify (fsnotify and pidfd wake-ups)", Value: "poll"}
	flagSettle  = &cli.StringFlag{Name: "settle", Usage: "a node that exits within `DURATION` of its start has FAILED; paid once per batch; 0: no window", DefaultText: multi.DefaultSettle.String()}
	flagLost    = &cli.BoolFlag{Name: "lost", Usage: "also signal a lost node (its lock gone, its recorded process running), through a pidfd after checking its start time"}
	flagGroup   = &cli.BoolFlag{Name: "group", Usage: "signal each node's whole process group, so what it forked gets the signal too"}
	flagJSON    = &cli.BoolFlag{Name: "json", Usage: "print a JSON array, one object per node"}
	flagFollow  = &cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing what is appended, until interrupted"}

	flagSelfLock    = &cli.BoolFlag{Name: "self-lock", Usage: "the node locks its own pidfile (its path is in $MULTI_PIDFILE); start waits for it to"}
	flagLockTimeout = &cli.StringFlag{Name: "lock-timeout", Usage: "with --self-lock, how long start waits for the node to lock its pidfile before it kills it", DefaultText: "10s"}

	flagPrefix      = &cli.StringFlag{Name: "prefix", Usage: "put `TEXT` before every node name given (not counted ones)"}
	flagSuffix      = &cli.StringFlag{Name: "suffix", Usage: "`HOST` part of full names, as celery's --suffix (\"\" for none); wins over --hostname"}
	flagHostname    = &cli.StringFlag{Name: "hostname", Usage: "`HOST` part of full names (%h, %n, %d: this machine's)", DefaultText: "this machine's host name"}
	flagRangePrefix = &cli.StringFlag{Name: "range-prefix", Usage: "`PREFIX` of the names a count gives", Value: nodes.DefaultRangePrefix}

	flagQuiet   = &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only failures"}
	flagVerbose = &cli.BoolFlag{Name: "verbose", Usage: "also print each node's command line, pidfile and logfile"}
	flagNoColor = &cli.BoolFlag{Name: "no-color", Usage: "no colours (also $NO_COLOR); colours are only ever used on a terminal"}
)

// common adds the flags every command takes to a command's own flags.
func common(flags ...cli.Flag) []cli.Flag {
	return append(flags, flagPrefix, flagSuffix, flagHostname, flagRangePrefix, flagQuiet, flagVerbose, flagNoColor)
}

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code := exitOK
	app := newApp(stdout, stderr, &code)
	if len(args) < 2 {
		app.Writer = stderr
		app.Run(args[:1]) // shows the help
		return exitUsage
	}
	if err := app.RunContext(ctx, args); err != nil {
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(stderr, msg)
		}
		var ec cli.ExitCoder
		if errors.As(err, &ec) {
			return ec.ExitCode()
		}
		return exitUsage
	}
	return code
}

func newApp(stdout, stderr io.Writer, code *int) *cli.App {
	app := &cli.App{
		Name:                 "multi",
		Usage:                "start named nodes in the background and stop them without signalling the wrong process",
		UsageText:            "multi COMMAND [flags] NODES... [-SIGNAL] [OPTIONS] [-- COMMAND ARGS...]",
		Version:              version(),
		Writer:               stdout,
		ErrWriter:            stderr,
		EnableBashCompletion: true,
		Description: `Each node's own process holds a lock on its pidfile for its whole life;
multi only ever signals the process the kernel names as that lock's holder,
and stopwait waits for the lock to be released, so a recycled pid or a
zombie can never fool it.

Exit codes: 0 success, 1 a node failed, 2 usage error; status: 0 all running,
1 a stale pidfile, 3 not running, 4 unknown.`,
		Commands: []*cli.Command{
			verb("start", "start nodes",
				"multi start [flags] NODES... [OPTIONS] [-- COMMAND [ARG...]]",
				`Start each node that is not running, in parallel; return once each runs its
command holding its pidfile's lock, or has failed. Without -- COMMAND, start
from the node's record. OPTIONS (celery's worker options, per node as
-c:1-3 10) are added after the command's arguments.

   multi start w1 w2 w3 -- sleep 300
   multi start 3 --range-prefix=web --pidfile=/run/app/%n.pid -- app --port=80%i
   multi start A B C D -c:1 4 -c:2-4 8 -- worker --name=%h
   multi start w1 --self-lock -- mygonode`,
				false, common(flagPidfile, flagLogfile, flagRundir, flagSelfLock, flagLockTimeout, flagSettle), (*multi.Cluster).Start, code),
			verb("stop", "send a signal (default TERM) and return",
				"multi stop [flags] [NODES...] [-SIGNAL]",
				`Send the signal to each node's lock holder. A stale pidfile is removed,
never signalled. Without NODES: every recorded node.

   multi stop w1 w2
   multi stop w1 -HUP
   multi stop --group -KILL`,
				true, common(flagPidfile, flagLogfile, flagRundir, flagGroup, flagLost), (*multi.Cluster).Stop, code),
			verb("stopwait", "send a signal, wait until each node's lock is released, remove the pidfiles",
				"multi stopwait [flags] [NODES...] [-SIGNAL]",
				`Signal every node at once, then wait until each node's lock is released
(not until a pid disappears), and remove the pidfiles. With --timeout,
nodes still running then get SIGKILL.

   multi stopwait
   multi stopwait w1 w2 --timeout=30s
   multi stopwait 3 -INT --wait=notify`,
				true, common(flagPidfile, flagLogfile, flagRundir, flagTimeout, flagWait, flagGroup, flagLost), (*multi.Cluster).StopWait, code),
			verb("kill", "send KILL, wait until each node's lock is released, remove the pidfiles",
				"multi kill [flags] [NODES...]",
				`   multi kill w1
   multi kill --group`,
				false, common(flagPidfile, flagLogfile, flagRundir, flagWait, flagGroup, flagLost), (*multi.Cluster).Kill, code),
			verb("restart", "stopwait nodes, then start them again with their recorded command",
				"multi restart [flags] [NODES...] [-SIGNAL] [OPTIONS] [-- COMMAND [ARG...]]",
				`Stopwait each running node, then start it again from its record; a node
that is down is just started. New OPTIONS replace the recorded ones; a
new COMMAND replaces the record.

   multi restart
   multi restart w2 --timeout=10s
   multi restart w1 -c 8`,
				true, common(flagPidfile, flagLogfile, flagRundir, flagTimeout, flagWait, flagGroup, flagSelfLock, flagLockTimeout, flagSettle, flagLost), (*multi.Cluster).Restart, code),
			statusCommand(code),
			logsCommand(code),
			namesCommand(),
			expandCommand(),
			showCommand("show", "print the command line each node would run, shell-quoted",
				"multi show [flags] NODES... [OPTIONS] [-- COMMAND [ARG...]]",
				"   multi show A B C D -c:1 4 -c:2-4 8 -- worker\n   multi show w1     # the recorded command", code),
			showCommand("get", "print the command line of the node FULLNAME (exit 1 if it is not in the set)",
				"multi get [flags] FULLNAME NODES... [OPTIONS] [-- COMMAND [ARG...]]",
				"   multi get w2@myhost w1 w2 w3 -- worker %n", code),
			completionCommand(),
			{
				Name:   "man",
				Usage:  "print the manual page (roff)",
				Hidden: true,
				Action: func(c *cli.Context) error {
					page, err := c.App.ToManWithSection(1)
					if err != nil {
						return err
					}
					_, err = io.WriteString(c.App.Writer, page)
					return err
				},
			},
		},
		CommandNotFound: func(c *cli.Context, name string) {
			fmt.Fprintf(stderr, "multi: unknown command %q (see multi --help)\n", name)
			*code = exitUsage
		},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return cli.Exit("multi: "+err.Error(), exitUsage)
		},
		ExitErrHandler: func(c *cli.Context, err error) {},
	}
	for _, cmd := range app.Commands {
		if cmd.SkipFlagParsing {
			cmd.BashComplete = complete
		}
	}
	return app
}

// version is the module's version from the build info, with the VCS
// revision when the build recorded one.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 12:
			v += " " + s.Value[:12]
		case s.Key == "vcs.modified" && s.Value == "true":
			v += "+dirty"
		}
	}
	return v + " " + bi.GoVersion
}

// parseCommand parses a verb's arguments with multi's grammar, driven by
// the flags the verb declares.
func parseCommand(c *cli.Context, withSignal bool) (*nodes.Args, error) {
	p := nodes.Parser{Flags: map[string]bool{}, Short: map[string]string{},
		PerNode: map[string]bool{"pidfile": true, "logfile": true}, Forward: true}
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
	if errors.Is(err, nodes.ErrHelp) {
		cli.HelpPrinter(c.App.Writer, cli.CommandHelpTemplate, c.Command)
		return nil, cli.Exit("", exitOK)
	}
	if err != nil {
		return nil, usage(c, err)
	}
	return a, nil
}

// usage is a usage error naming the verb, with the verb's usage line, and
// exit code 2.
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
	// Detach: this process exits right after, and its nodes are reparented.
	cl := &multi.Cluster{Nodes: ns, RunDir: rundir(a), Group: a.Flags["group"] == "true", Detach: true,
		SignalLost: a.Flags["lost"] == "true"}
	if t := a.Flags["settle"]; t == "0" {
		cl.Settle = -1 // no window
	} else if t != "" {
		if cl.Settle, err = parseTimeout("--settle", t); err != nil {
			return nil, usage(c, err)
		}
	}
	if a.Signal != "" {
		if cl.Signal, err = multi.ParseSignal(a.Signal); err != nil {
			return nil, usage(c, err)
		}
	}
	if t := a.Flags["timeout"]; t != "" {
		if cl.Timeout, err = parseTimeout("--timeout", t); err != nil {
			return nil, usage(c, err)
		}
	}
	if t := a.Flags["lock-timeout"]; t != "" {
		if cl.LockTimeout, err = parseTimeout("--lock-timeout", t); err != nil {
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
		SelfLock:    a.Flags["self-lock"] == "true",
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

func parseTimeout(flag, s string) (time.Duration, error) {
	if n, err := strconv.ParseFloat(s, 64); err == nil && n > 0 {
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s wants a positive duration (10s, 1m30s) or seconds, not %q", flag, s)
	}
	return d, nil
}

// verb builds a lifecycle command: parse, build the cluster, call one
// method, print a line per node, map failures to exit code 1.
func verb(name, usageLine, usageText, description string, withSignal bool, flags []cli.Flag,
	do func(*multi.Cluster, context.Context) ([]multi.Result, error), code *int) *cli.Command {
	return &cli.Command{
		Name:            name,
		Usage:           usageLine,
		UsageText:       usageText,
		Description:     description,
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
			o := newOutput(c, a)
			done := o.progress(name, cl)
			results, err := do(cl, c.Context)
			done()
			for _, r := range results {
				o.result(r)
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

// output prints results for a person: colours and progress on a terminal
// only, less with --quiet, more with --verbose.
type output struct {
	w, errw io.Writer
	tty     bool // w is a terminal
	color   bool
	quiet   bool
	verbose bool
	json    bool
}

func newOutput(c *cli.Context, a *nodes.Args) *output {
	o := &output{w: c.App.Writer, errw: c.App.ErrWriter, tty: isTerminal(c.App.Writer),
		quiet: a.Flags["quiet"] == "true", verbose: a.Flags["verbose"] == "true", json: a.Flags["json"] == "true"}
	o.color = o.tty && a.Flags["no-color"] != "true" && os.Getenv("NO_COLOR") == ""
	return o
}

// isTerminal reports whether w is a character device such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

const (
	red    = "\033[31m"
	green  = "\033[32m"
	yellow = "\033[33m"
)

func (o *output) paint(color, s string) string {
	if !o.color {
		return s
	}
	return color + s + "\033[0m"
}

// result prints one node's line: "w1: started (pid 1234)".
func (o *output) result(r multi.Result) {
	if r.Warning != "" {
		fmt.Fprintf(o.errw, "%s: warning: %s\n", r.Node.Name, r.Warning)
	}
	failed := r.Err != nil && !errors.Is(r.Err, multi.ErrAlreadyRunning)
	if o.quiet && !failed {
		return
	}
	if o.verbose {
		o.describe(r.Node)
	}
	line := strings.TrimPrefix(r.String(), r.Node.Name+": ")
	switch {
	case errors.Is(r.Err, multi.ErrAlreadyRunning):
		// Starting what already runs is done, as LSB init scripts have it.
		line = o.paint(yellow, r.Msg)
	case failed:
		line = o.paint(red, "FAILED") + strings.TrimPrefix(line, "FAILED")
	case strings.HasPrefix(line, "not running"):
		line = o.paint(yellow, line)
	default:
		word, rest, _ := strings.Cut(line, " ")
		line = o.paint(green, word) + " " + rest
	}
	fmt.Fprintf(o.w, "%s: %s\n", r.Node.Name, strings.TrimSpace(line))
}

// describe prints what --verbose adds for a node: its command line and
// files.
func (o *output) describe(n nodes.Node) {
	cmd := "(no command)"
	if len(n.Command) > 0 {
		cmd = nodes.Quote(n.Command)
	}
	fmt.Fprintf(o.w, "%s: %s  [pidfile %s, logfile %s]\n", n.Name, cmd, n.PidFile, n.LogFile)
}

// progress shows, on a terminal, a one-line count of the nodes done so
// far, which gives way to the per-node lines; never with --json or
// --quiet, never when not on a terminal. It returns the function that
// clears the line.
func (o *output) progress(verb string, c *multi.Cluster) (clear func()) {
	if !o.tty || o.json || o.quiet || len(c.Nodes) < 2 {
		return func() {}
	}
	word := map[string]string{"start": "started", "stop": "signalled", "stopwait": "stopped",
		"kill": "killed", "restart": "restarted"}[verb]
	begin, last := time.Now(), time.Time{}
	done, shown := 0, false
	c.Progress = func(multi.Result) {
		done++
		if now := time.Now(); done == len(c.Nodes) || now.Sub(last) >= 100*time.Millisecond {
			last, shown = now, true
			fmt.Fprintf(o.w, "\r\033[K%s: %d/%d %s, %.1fs", verb, done, len(c.Nodes), word, now.Sub(begin).Seconds())
		}
	}
	return func() {
		if shown {
			fmt.Fprint(o.w, "\r\033[K")
		}
	}
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
		Name:      "status",
		Usage:     "show each node's state from its pidfile's lock (exit 0 all running, 1 stale, 3 stopped, 4 lost or unknown)",
		UsageText: "multi status [flags] [NODES...] [--json]",
		Description: `On a terminal, a table: node, state, pid, uptime, pidfile, logfile.
Elsewhere, a line per node. States: running, stopped, stale (a pidfile
nobody holds the lock of), elsewhere (held from another pid namespace),
lost (no lock held, but the node's recorded process, same pid and start
time, still runs: stop it with --lost).

   multi status
   multi status w1 w2 --json`,
		Flags:           common(flagPidfile, flagLogfile, flagRundir, flagJSON),
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
			o := newOutput(c, a)
			switch {
			case o.json:
				out := make([]statusJSON, len(sts))
				for i, s := range sts {
					out[i] = statusJSON{Name: s.Node.Name, FullName: s.Node.FullName(), State: s.State.String(),
						PID: s.PID, FilePID: s.FilePID, PidFile: s.Node.PidFile, LogFile: s.Node.LogFile}
					if s.Err != nil {
						out[i].State, out[i].Error = "unknown", s.Err.Error()
					} else if s.Lost != nil {
						out[i].State, out[i].PID = "lost", s.Lost.PID
					}
				}
				enc := json.NewEncoder(c.App.Writer)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			case o.quiet:
				for _, s := range sts {
					if s.Err != nil {
						fmt.Fprintln(c.App.Writer, s.Node.Name+": "+o.describeStatus(s))
					}
				}
			case o.tty:
				o.statusTable(sts)
			default:
				for _, s := range sts {
					fmt.Fprintln(c.App.Writer, s.Node.Name+": "+o.describeStatus(s))
				}
			}
			return nil
		},
	}
}

func (o *output) describeStatus(s multi.Status) string {
	switch {
	case s.Err != nil:
		return o.paint(red, "unknown") + ": " + strings.TrimPrefix(s.Err.Error(), "multi: status "+s.Node.Name+": ")
	case s.Lost != nil:
		return o.paint(red, "lost") + fmt.Sprintf(" (pid %d, started %s, runs without its pidfile's lock; stop it with --lost)", s.Lost.PID, s.Lost.Started.Format(time.DateTime))
	case s.State == nodes.Running && s.Mismatch():
		return o.paint(green, "running") + fmt.Sprintf(" (pid %d; the pidfile's text disagrees, the lock holder is the truth)", s.PID)
	case s.State == nodes.Running:
		return o.paint(green, "running") + fmt.Sprintf(" (pid %d)", s.PID)
	case s.State == nodes.Stale:
		return o.paint(red, "stale") + " (pidfile " + s.Node.PidFile + " left behind; no process holds its lock)"
	case s.State == nodes.Elsewhere:
		return o.paint(green, "running") + " in another pid namespace (holder not visible from here)"
	}
	return o.paint(yellow, "stopped")
}

// statusTable prints the aligned table status shows on a terminal.
func (o *output) statusTable(sts []multi.Status) {
	tw := tabwriter.NewWriter(o.w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tSTATE\tPID\tUPTIME\tPIDFILE\tLOGFILE")
	for _, s := range sts {
		state, color := s.State.String(), yellow
		switch {
		case s.Err != nil:
			state, color = "unknown", red
		case s.Lost != nil:
			state, color, s.PID = "lost", red, s.Lost.PID
		case s.State == nodes.Running || s.State == nodes.Elsewhere:
			color = green
		case s.State == nodes.Stale:
			color = red
		}
		pid, uptime := "-", "-"
		if s.PID > 0 {
			pid = strconv.Itoa(s.PID)
			if t, err := nodes.ProcessStart(s.PID); err == nil {
				uptime = time.Since(t).Round(time.Second).String()
			}
		}
		// tabwriter counts colour codes as width, but every state carries
		// the same codes, so the column stays aligned.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Node.Name, o.paint(color, state), pid, uptime, s.Node.PidFile, s.Node.LogFile)
	}
	tw.Flush()
}

// statusCode maps node states to LSB status codes: the worst one wins.
func statusCode(sts []multi.Status) int {
	code := exitOK
	for _, s := range sts {
		switch {
		case s.Err != nil, s.Lost != nil:
			// A lost node runs, unseen through its lock: unknown.
			return exitUnknown
		case s.State == nodes.Stale:
			code = exitFailed
		case s.State == nodes.Absent && code == exitOK:
			code = exitStopped
		}
	}
	return code
}

// logsCommand prints a node's logfile, and follows it with -f.
func logsCommand(code *int) *cli.Command {
	return &cli.Command{
		Name:      "logs",
		Usage:     "print a node's logfile; -f follows it",
		UsageText: "multi logs [flags] NODE [-f]",
		Description: `   multi logs w1
   multi logs w1 -f      # until Ctrl-C`,
		Flags:           common(flagLogfile, flagRundir, flagFollow),
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			a, err := parseCommand(c, false)
			if err != nil {
				return err
			}
			if len(a.Names) != 1 {
				return usage(c, errors.New("give one node name"))
			}
			ns, err := resolve(c, a)
			if err != nil {
				return err
			}
			err = printLog(c.Context, c.App.Writer, ns[0].LogFile, a.Flags["follow"] == "true")
			if err != nil && !errors.Is(err, context.Canceled) {
				fmt.Fprintf(c.App.ErrWriter, "%s: FAILED: %v\n", ns[0].Name, err)
				*code = exitFailed
			}
			return nil
		},
	}
}

// printLog copies the file at path to w; with follow, it then copies what
// is appended until ctx is done, starting over when the file is truncated
// or replaced. fsnotify says when to look, and a slow poll stays under it.
func printLog(ctx context.Context, w io.Writer, path string, follow bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { f.Close() }()
	if _, err := io.Copy(w, f); err != nil || !follow {
		return err
	}
	var events <-chan fsnotify.Event // nil, so never ready, without fsnotify
	if watch, err := fsnotify.NewWatcher(); err == nil {
		defer watch.Close()
		watch.Add(filepath.Dir(path))
		events = watch.Events
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-events:
		case <-tick.C:
		}
		pos, _ := f.Seek(0, io.SeekCurrent)
		if st, err := os.Stat(path); err == nil {
			cur, _ := f.Stat()
			if !os.SameFile(st, cur) || st.Size() < pos {
				// Rotated or truncated: read the new file from the start.
				if nf, err := os.Open(path); err == nil {
					f.Close()
					f = nf
				}
			}
		}
		if _, err := io.Copy(w, f); err != nil {
			return err
		}
	}
}

// namesCommand prints each node's full name, as celery multi names.
func namesCommand() *cli.Command {
	return &cli.Command{
		Name:            "names",
		Usage:           "print each node's full name, one per line",
		UsageText:       "multi names [flags] NODES...",
		Description:     "   multi names 3 --range-prefix=web\n   multi names w1 w2 --suffix=example.com",
		Flags:           common(flagRundir),
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
		Name:      "expand",
		Usage:     "print TEMPLATE expanded for each node, one per line",
		UsageText: "multi expand [flags] TEMPLATE NODES...",
		Description: `Letters: %n short name, %h full name, %d host part, %i index, %% a %.

   multi expand /run/app/%n.pid 3`,
		Flags:           common(flagRundir),
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
func showCommand(name, usageLine, usageText, description string, code *int) *cli.Command {
	return &cli.Command{
		Name:            name,
		Usage:           usageLine,
		UsageText:       usageText,
		Description:     description,
		Flags:           common(flagPidfile, flagLogfile, flagRundir),
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
		},
	}
}

// complete lists, for shell completion, the recorded nodes not yet on the
// command line, or the command's flags when the word being completed
// starts with a dash.
func complete(c *cli.Context) {
	args := c.Args().Slice()
	if n := len(args); n > 0 && strings.HasPrefix(args[n-1], "-") {
		for _, f := range c.Command.Flags {
			for _, name := range f.Names() {
				if len(name) > 1 {
					fmt.Fprintln(c.App.Writer, "--"+name)
				}
			}
		}
		return
	}
	given := map[string]bool{}
	for _, a := range args {
		given[a] = true
	}
	recs, _ := nodes.ReadRecords(nodes.DefaultRunDir())
	for _, n := range recs {
		if !given[n.Name] {
			fmt.Fprintln(c.App.Writer, n.Name)
		}
	}
}

// completionCommand prints the shell code that wires completion to
// urfave/cli's --generate-bash-completion.
func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print shell completion code for bash or zsh",
		UsageText: "multi completion bash|zsh",
		Description: `Commands, flags and recorded node names complete.

   source <(multi completion bash)                 # in ~/.bashrc
   multi completion zsh > "${fpath[1]}/_multi"     # zsh`,
		Action: func(c *cli.Context) error {
			script, ok := map[string]string{"bash": bashCompletion, "zsh": zshCompletion}[c.Args().First()]
			if !ok || c.NArg() != 1 {
				return usage(c, errors.New("say bash or zsh"))
			}
			_, err := io.WriteString(c.App.Writer, script)
			return err
		},
	}
}

const bashCompletion = `# bash completion for multi
_multi_complete() {
  local cur="${COMP_WORDS[COMP_CWORD]}" opts
  if [[ "$cur" == -* ]]; then
    opts=$("${COMP_WORDS[@]:0:$COMP_CWORD}" "$cur" --generate-bash-completion 2>/dev/null)
  else
    opts=$("${COMP_WORDS[@]:0:$COMP_CWORD}" --generate-bash-completion 2>/dev/null)
  fi
  COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -o bashdefault -o default -F _multi_complete multi
`

const zshCompletion = `#compdef multi
_multi() {
  local -a opts
  local cur=${words[-1]}
  if [[ "$cur" == -* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} "$cur" --generate-bash-completion 2>/dev/null)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ -n "${opts[1]}" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
compdef _multi multi
`
