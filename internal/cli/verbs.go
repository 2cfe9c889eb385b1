package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/celery"
	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/urfave/cli/v2"
)

// A lifecycle verb signals or starts nodes through one method of
// [multi.Cluster] and prints a line per node: start, stop, stopwait, kill,
// restart.
type lifecycle struct {
	name, usage, usageText, description string
	flags                               []cli.Flag
	grammar
	// waits: the verb waits for locks to be released, and its progress
	// line says for what.
	waits bool
	// do calls the verb's method with the call's options.
	do func(*multi.Cluster, context.Context, multi.RestartOptions) ([]multi.Result, error)
}

func start(c *multi.Cluster, ctx context.Context, _ multi.RestartOptions) ([]multi.Result, error) {
	return c.Start(ctx)
}

func stop(c *multi.Cluster, ctx context.Context, o multi.RestartOptions) ([]multi.Result, error) {
	return c.Stop(ctx, o.Stop)
}

func stopWait(c *multi.Cluster, ctx context.Context, o multi.RestartOptions) ([]multi.Result, error) {
	return c.StopWait(ctx, o.Stop)
}

func kill(c *multi.Cluster, ctx context.Context, o multi.RestartOptions) ([]multi.Result, error) {
	return c.Kill(ctx, o.Stop)
}

var (
	verbStart = lifecycle{name: "start", usage: "start nodes",
		usageText: "multi start [flags] [NODES...] [OPTIONS] [-- COMMAND [ARG...]]",
		description: `Start each node that is not running, in parallel; return once each runs its
command holding its pidfile's lock, or has failed. Without -- COMMAND, start
from the node's record. OPTIONS (celery's worker options, per node as
-c:1-3 10) are added after the command's arguments. Without NODES: every
recorded node of this project (started in this folder; --all: every one)
that is down. A node running another command than the one given: FAILED.

   multi start w1 w2 w3 -- sleep 300
   multi start 3 --range-prefix=web --pidfile=/run/app/%n.pid -- app -p 80%i
   multi start A B C D -c:1 4 -c:2-4 8 -- worker --name=%h
   multi start w1 --self-lock -- mygonode
   multi start`,
		flags:   common(withLimits(flagPidfile, flagLogfile, flagRundir, flagSelfLock, flagLockTimeout, flagSettle, flagEnv, flagEnvFile, flagAll, flagReady, flagReadyTimeout, flagClean, flagKillMode)...),
		grammar: grammar{forward: true, starts: true, project: true},
		do:      start}
	verbStop = lifecycle{name: "stop", usage: "send a signal (default TERM) and return",
		usageText: "multi stop [flags] [NODES...] [-SIGNAL]",
		description: `Send the signal to each node's lock holder. A stale pidfile is removed,
never signalled. Without NODES: every node of this project (started in this
folder; --all: every recorded node).

   multi stop w1 w2
   multi stop w1 -HUP
   multi stop --group -KILL`,
		flags:   common(flagPidfile, flagLogfile, flagRundir, flagGroup, flagLost, flagAll),
		grammar: grammar{signal: true, project: true},
		do:      stop}
	verbStopWait = lifecycle{name: "stopwait", usage: "send a signal, wait until each node's lock is released, remove the pidfiles",
		usageText: "multi stopwait [flags] [NODES...] [-SIGNAL]",
		description: `Signal every node at once, then wait until each node's lock is released
(not until a pid disappears), and remove the pidfiles. With --timeout,
nodes still running then get SIGKILL.

   multi stopwait
   multi stopwait w1 w2 --timeout=30s
   multi stopwait 3 -INT --wait=notify`,
		flags:   common(flagPidfile, flagLogfile, flagRundir, flagTimeout, flagWait, flagGroup, flagLost, flagAll),
		grammar: grammar{signal: true, endsNodes: true, project: true},
		waits:   true,
		do:      stopWait}
	verbKill = lifecycle{name: "kill", usage: "send KILL, wait until each node's lock is released, remove the pidfiles",
		usageText: "multi kill [flags] [NODES...]",
		description: `   multi kill w1
   multi kill --group`,
		flags:   common(flagPidfile, flagLogfile, flagRundir, flagWait, flagGroup, flagLost, flagAll),
		grammar: grammar{project: true},
		waits:   true,
		do:      kill}
	verbRestart = lifecycle{name: "restart", usage: "signal nodes, and start each again with its recorded command as soon as it is down",
		usageText: "multi restart [flags] [NODES...] [-SIGNAL] [OPTIONS] [-- COMMAND [ARG...]]",
		description: `Check that each node's command can start again (folder present, program
found and executable; if not, the node is left running and FAILED), then
signal every running node and start each again from its record the moment
it is down; a node that is down is just started. --rolling: one node at a
time, each up again before the next is signalled. New OPTIONS replace the
recorded ones; a new COMMAND replaces the record. A restarted node gets
this command's environment, not the one it was first started with.

   multi restart
   multi restart --rolling --timeout=30s
   multi restart w2 --timeout=10s
   multi restart w1 -c 8`,
		flags:   common(withLimits(flagPidfile, flagLogfile, flagRundir, flagTimeout, flagWait, flagGroup, flagSelfLock, flagLockTimeout, flagSettle, flagLost, flagRolling, flagEnv, flagEnvFile, flagAll, flagReady, flagReadyTimeout, flagMaxUnavailable)...),
		grammar: grammar{signal: true, endsNodes: true, forward: true, starts: true, project: true},
		do:      (*multi.Cluster).Restart}
)

// command is the verb as a command: parse, build the cluster, call one
// method, print a line per node, exit 1 when a node failed.
func (v lifecycle) command() *cli.Command {
	return grammarCommand(&cli.Command{
		Name:        v.name,
		Usage:       v.usage,
		UsageText:   v.usageText,
		Description: v.description,
		Flags:       v.flags,
	}, v.grammar, v.run)
}

func (v lifecycle) run(c *cli.Context, a *call) (int, error) {
	cl, err := cluster(c, a)
	if err != nil {
		return exitUsage, err
	}
	o := newOutput(c, a)
	// A name given that is neither recorded nor has a pidfile (a typo,
	// another --rundir) is unknown, as status says: nothing is done to
	// it, and the others go on.
	var unknown map[string]error
	all := cl
	if !v.starts && len(a.Names) > 0 {
		if unknown = unknownNodes(cl.Nodes, cl.RunDir, v.name); len(unknown) > 0 {
			var known []string
			for _, n := range cl.Nodes {
				if unknown[n.Name] == nil {
					known = append(known, n.Name)
				}
			}
			if cl, err = cl.Only(known...); err != nil {
				return exitUsage, err
			}
		}
	}
	opts := multi.RestartOptions{Stop: stopOptions(a), Rolling: a.Rolling || a.MaxUnavailable > 0, MaxUnavailable: a.MaxUnavailable}
	if opts.Stop.Group && opts.Stop.Signal != syscall.SIGKILL {
		for _, n := range cl.Nodes {
			if celery.Is(n.Command) {
				fmt.Fprintf(c.App.ErrWriter, "multi %s: warning: --group signals %s's whole process group: a celery worker's prefork pool children get %s too and drop their tasks at once, and the worker's own shutdown may hang; without --group celery stops its pool itself\n",
					v.name, n.Name, pin.SignalName(cmp.Or(opts.Stop.Signal, syscall.SIGTERM)))
				break
			}
		}
	}
	done := o.progress(v.name, v.waits, cl, &opts.Stop)
	quiet := func() {}
	if v.waits || v.endsNodes {
		quiet = o.stillWaiting(v.name, cl, &opts.Stop)
	}
	results, err := v.do(cl, c.Context, opts)
	quiet()
	done()
	if wasInterrupted(c.Context) {
		o.interrupted(c, cl, results)
		return exitOK, nil // Run exits as the signal says
	}
	if len(unknown) > 0 {
		results = withUnknown(all.Nodes, results, unknown)
	}
	o.results(results)
	switch {
	case len(unknown) > 0:
		return exitUnknown, nil
	case err != nil:
		return exitFailed, nil
	}
	return exitOK, nil
}

// withUnknown is the results of the nodes of ns, those that are unknown
// (failed with their error) among rs, the others', in ns's order.
func withUnknown(ns []nodes.Node, rs []multi.Result, unknown map[string]error) []multi.Result {
	out := make([]multi.Result, 0, len(ns))
	for _, n := range ns {
		if err := unknown[n.Name]; err != nil {
			out = append(out, multi.Result{Node: n, Outcome: multi.Failed, Err: err})
			continue
		}
		out = append(out, rs[0])
		rs = rs[1:]
	}
	return out
}

// cluster builds the set of nodes and the cluster from a verb's call.
func cluster(c *cli.Context, a *call) (*multi.Cluster, error) {
	ns, err := resolve(c, a)
	if err != nil {
		return nil, err
	}
	if a.starts && !a.HasCommand {
		for _, n := range ns {
			if len(n.Command) == 0 {
				return nil, usage(c, fmt.Errorf("%s: no command: give one after -- (no record %s); %s", n.Name, record.Path(rundir(a), n.Name), noCommandHint(c)))
			}
		}
	}
	// Detach: this process exits right after, and its nodes are reparented.
	if a.KillMode != "" {
		for i := range ns {
			ns[i].KillMode = a.KillMode // recorded with the node
		}
	}
	return &multi.Cluster{Nodes: ns, RunDir: rundir(a), Detach: true, AllowSharedFolders: a.AllowSharedFolders,
		LockTimeout: a.LockTimeout, Settle: a.Settle, ReadyTimeout: a.ReadyTimeout, Clean: a.Clean}, nil
}

// stopOptions are the options of a call's stops, from its flags and its
// -SIGNAL.
func stopOptions(a *call) multi.StopOptions {
	return multi.StopOptions{Signal: a.Signal, Timeout: a.Timeout, Wait: a.Wait, Group: a.Group, Lost: a.Lost}
}

// rundir is --rundir, else $MULTI_RUNDIR, else the default.
func rundir(a *call) string {
	if a.RunDir != "" {
		return a.RunDir
	}
	return nodes.DefaultRunDir()
}

// resolve builds the set of nodes from a verb's call and the records,
// or from the project file when the call names none of its own.
func resolve(c *cli.Context, a *call) ([]nodes.Node, error) {
	if ns, ok, err := resolveFile(c, a); ok || err != nil {
		return ns, err
	}
	spec := nodes.Spec{
		Names:       a.Names,
		Prefix:      a.Prefix,
		Host:        a.Hostname,
		RangePrefix: a.RangePrefix,
		RunDir:      rundir(a),
		PidFile:     a.PidFile,
		LogFile:     a.LogFile,
		NodeFiles:   a.NodeFiles,
		Options:     a.Options,
		Command:     a.Command,
		SelfLock:    a.SelfLock,
		Env:         a.Env,
		EnvFiles:    a.EnvFiles,
		Ready:       a.Ready,
		Limits:      a.Limits,
	}
	if a.Suffix != nil {
		spec.Host = *a.Suffix
		if spec.Host == "" {
			spec.Host = `""`
		}
	}
	wd, wdErr := os.Getwd()
	if a.starts && wdErr == nil {
		// Recorded with the node, so that a restart from elsewhere runs
		// a relative command in the folder it was started from.
		spec.Dir = wd
	}
	if a.names && len(a.Names) == 0 {
		return nil, usage(c, errors.New("no nodes given"))
	}
	if a.HasCommand && len(a.Command) == 0 {
		return nil, usage(c, errors.New("no command after --"))
	}
	if a.HasCommand && !a.forward {
		return nil, usage(c, errors.New("a command after -- only goes with start, run, restart, show and get"))
	}
	if a.HasCommand {
		if err := checkCommandWord(a.Command, a.Env); err != nil {
			return nil, usage(c, err)
		}
	}
	skipped := func(err error) {
		fmt.Fprintf(c.App.ErrWriter, "multi %s: warning: %v; skipped\n", c.Command.Name, err)
	}
	if len(a.Names) == 0 && a.starts && (a.HasCommand || len(a.Options) > 0) {
		return nil, usage(c, errStartNoNames)
	}
	if len(a.Names) == 0 && !a.All && wdErr == nil && !a.AllowSharedFolders {
		// This project's nodes, not every recorded one.
		names, err := projectNames(c, spec.RunDir, wd, skipped)
		if err != nil {
			return nil, err
		}
		if names != nil {
			spec.Names, spec.Prefix = names, ""
		}
	}
	ns, err := record.Resolve(spec, a.AllowSharedFolders, skipped)
	if err != nil {
		return nil, usage(c, err)
	}
	if wdErr == nil && !a.AllowSharedFolders {
		if err := otherProjects(c, a, spec.RunDir, wd, ns); err != nil {
			return nil, err
		}
	}
	if a.starts {
		// A record too large to read back would lose the node: refused
		// before anything starts.
		for _, n := range ns {
			if err := record.CheckSize(spec.RunDir, n); err != nil {
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
		switch s.State {
		case multi.StateRunning:
			running = append(running, fmt.Sprintf("%s (pid %d)", s.Node.Name, s.PID))
		case multi.StateElsewhere:
			running = append(running, s.Node.Name)
		}
	}
	msg := "no node left running"
	if len(running) > 0 {
		msg = "left as they are, still running: " + strings.Join(running, ", ")
	}
	fmt.Fprintf(o.errw, "multi %s: interrupted; %s\n", c.Command.Name, msg)
}
