package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
	"github.com/multi-launcher/multi/waiter"
	"github.com/urfave/cli/v2"
)

// cluster builds the set of nodes and the cluster from parsed arguments.
func cluster(c *cli.Context, a *Args) (*multi.Cluster, error) {
	ns, err := resolve(c, a)
	if err != nil {
		return nil, err
	}
	// Detach: this process exits right after, and its nodes are reparented.
	cl := &multi.Cluster{Nodes: ns, RunDir: rundir(a), Group: a.Flags["group"] == "true", Detach: true,
		SignalLost: a.Flags["lost"] == "true", Rolling: a.Flags["rolling"] == "true",
		AllowSharedFolders: a.Flags["allow-shared-folders"] == "true"}
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
		if multi.IsStopSignal(cl.Signal) && (c.Command.Name == "stopwait" || c.Command.Name == "restart") {
			return nil, usage(c, fmt.Errorf("-%s stops a node without ending it: %s would wait forever", a.Signal, c.Command.Name))
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
func rundir(a *Args) string {
	if d := a.Flags["rundir"]; d != "" {
		return d
	}
	return nodes.DefaultRunDir()
}

// resolve builds the set of nodes from parsed arguments and the records.
func resolve(c *cli.Context, a *Args) ([]nodes.Node, error) {
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
		Env:         a.Env,

		AllowSharedFolders: a.Flags["allow-shared-folders"] == "true",
	}
	if s, ok := a.Flags["suffix"]; ok {
		spec.Host = s
		if s == "" {
			spec.Host = `""`
		}
	}
	name := c.Command.Name
	if name == "start" || name == "restart" || name == "run" {
		// Recorded with the node, so that a restart from elsewhere runs
		// a relative command in the folder it was started from.
		if wd, err := os.Getwd(); err == nil {
			spec.Dir = wd
		}
	}
	if (name == "start" || name == "run") && len(a.Names) == 0 {
		return nil, usage(c, errors.New("no nodes given"))
	}
	if a.HasCommand && len(a.Command) == 0 {
		return nil, usage(c, errors.New("no command after --"))
	}
	if a.HasCommand && !runsCommand(name) {
		return nil, usage(c, errors.New("a command after -- only goes with start, run, restart, show and get"))
	}
	spec.Skipped = func(err error) {
		fmt.Fprintf(c.App.ErrWriter, "multi %s: warning: %v; skipped\n", name, err)
	}
	ns, err := spec.Resolve()
	if err != nil {
		return nil, usage(c, err)
	}
	if name == "start" || name == "restart" || name == "run" {
		// A record too large to read back would lose the node: refused
		// before anything starts.
		for _, n := range ns {
			if err := nodes.CheckRecord(spec.RunDir, n); err != nil {
				return nil, usage(c, fmt.Errorf("%w; nothing done", err))
			}
		}
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
	return grammarCommand(&cli.Command{
		Name:        name,
		Usage:       usageLine,
		UsageText:   usageText,
		Description: description,
		Flags:       flags,
	}, withSignal, func(c *cli.Context, a *Args) error {
		cl, err := cluster(c, a)
		if err != nil {
			return err
		}
		if (name == "start" || name == "restart") && !a.HasCommand {
			for _, n := range cl.Nodes {
				if len(n.Command) == 0 {
					return usage(c, fmt.Errorf("%s: no command: give one after -- (no record %s)", n.Name, nodes.RecordPath(cl.RunDir, n.Name)))
				}
			}
		}
		o := newOutput(c, a)
		done := o.progress(name, cl)
		results, err := do(cl, c.Context)
		done()
		if wasInterrupted(c.Context) {
			o.interrupted(c, cl, results)
			return nil
		}
		for _, r := range results {
			o.result(r)
		}
		if err != nil && !onlyAlreadyRunning(results) {
			*code = exitFailed
		}
		return nil
	})
}

// interrupted reports a verb cut short by Ctrl-C: the results that were
// final, then the nodes still running, which are left as they are. Run
// exits 130.
func (o *output) interrupted(c *cli.Context, cl *multi.Cluster, results []multi.Result) {
	for _, r := range results {
		if !errors.Is(r.Err, context.Canceled) {
			o.result(r)
		}
	}
	// A fresh context: the verb's own is cancelled.
	sts, _ := cl.Status(context.Background())
	var running []string
	for _, s := range sts {
		switch {
		case s.Err == nil && s.State == pidfile.Running:
			running = append(running, fmt.Sprintf("%s (pid %d)", s.Node.Name, s.PID))
		case s.Err == nil && s.State == pidfile.Elsewhere:
			running = append(running, s.Node.Name)
		}
	}
	msg := "no node left running"
	if len(running) > 0 {
		msg = "left as they are, still running: " + strings.Join(running, ", ")
	}
	fmt.Fprintf(o.errw, "multi %s: interrupted; %s\n", c.Command.Name, msg)
}

func onlyAlreadyRunning(results []multi.Result) bool {
	for _, r := range results {
		if r.Err != nil && !errors.Is(r.Err, multi.ErrAlreadyRunning) {
			return false
		}
	}
	return true
}
