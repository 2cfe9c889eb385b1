package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/multi-launcher/multi/multi"
	"github.com/urfave/cli/v2"
)

// ownSignals, in the app's Metadata, says that the verb handled SIGINT and
// SIGTERM itself (run: they stop the nodes) and its exit code stands.
const ownSignals = "own-signals"

// runCommand is multi run: the nodes in the foreground, as a container's
// PID 1 or a systemd Type=notify service.
func runCommand() *cli.Command {
	return grammarCommand(&cli.Command{
		Name:      "run",
		Usage:     "start nodes and stay in the foreground: reap, forward signals, stop them all on TERM (for containers and systemd)",
		UsageText: "multi run [flags] NODES... [-SIGNAL] [OPTIONS] [-- COMMAND [ARG...]]",
		Description: `Start the nodes as start does (each holds its locked pidfile, so status, stop,
stopwait, kill and logs work from another shell), then stay in the
foreground: reap every orphan (as PID 1, or as a child subreaper); on TERM,
INT or QUIT stop every node as stopwait does (-SIGNAL, then KILL after
--timeout) and exit once every lock is released; a second one kills at once;
HUP, USR1, USR2 and WINCH are forwarded to every node. Without --logfile the
nodes' output comes out here, each line prefixed with the node's name.

Exit status, as tini's: the first node that exits unexpectedly decides (its
code, or 128+signal: 137 for one SIGKILLed; 127 program not found, 126 not
executable); after a stop, 0 when every node exited 0 or by the stop
signal, 1 when one could not be stopped through its pidfile. A node stopped with
multi stop/stopwait from another shell is not a failure. READY=1 and
STOPPING=1 go to $NOTIFY_SOCKET (systemd Type=notify).

   multi run w1 w2 w3 -- worker --name=%n
   multi run 4 --on-exit=restart --ready-file=/tmp/ready -- app
   multi run w1 --wait-for-lock --pidfile=/shared/%n.pid -- app`,
		Flags: common(withLimits(flagPidfile, flagLogfile, flagRundir, flagRunTimeout, flagWait, flagGroup, flagSelfLock, flagLockTimeout, flagEnv, flagEnvFile,
			flagOnExit, flagReadyFile, flagWaitForLock, flagBackoff, flagReady, flagReadyTimeout, flagMaxRestarts, flagRestartWindow, flagHealth, flagLive, flagLiveInterval, flagLiveFailures,
			flagTimestamps, flagLogFormat)...),
	}, runGrammar, func(c *cli.Context, a *call) (int, error) {
		c.App.Metadata[ownSignals] = true
		cl, err := cluster(c, a)
		if err != nil {
			return exitUsage, err
		}
		if err := runReadyLog(cl, a); err != nil {
			return exitUsage, usage(c, err)
		}
		if err := checkLive(cl, a.Live); err != nil {
			return exitUsage, usage(c, err)
		}
		opts := multi.RunOptions{Stop: stopOptions(a), ReadyFile: a.ReadyFile, WaitForLock: a.WaitForLock, OnExit: a.OnExit, Backoff: a.Backoff,
			MaxRestarts: a.MaxRestarts, RestartWindow: a.RestartWindow, Health: a.Health,
			Live: a.Live, LiveInterval: a.LiveInterval, LiveFailures: a.LiveFailures,
			Log: c.App.ErrWriter}
		opts.Timestamps, opts.JSONLines = a.Timestamps, a.LogFormat == "json"
		if !logfileGiven(a) {
			if a.Limits.LogMaxSize != "" {
				return exitUsage, usage(c, errors.New("--log-max-size keeps the nodes' logfiles under a size: without --logfile, run prints their output"))
			}
			opts.Stdout, opts.Stderr = c.App.Writer, c.App.ErrWriter
		} else if opts.Timestamps || opts.JSONLines {
			return exitUsage, usage(c, errors.New("--timestamps and --log-format=json shape the nodes' lines run prints: with --logfile the nodes write their logfiles themselves"))
		}
		cl.Detach = false
		o := newOutput(c, a)
		o.w = c.App.ErrWriter // stdout is the nodes'
		cl.Progress = o.result
		// The run handles TERM and INT itself (the first stops, the second
		// kills): the context they cancel is not its business.
		code, err := cl.Run(context.WithoutCancel(c.Context), opts)
		// A RunError's nodes have said it already, through Progress and
		// the run's log.
		var re *multi.RunError
		if err != nil && !errors.As(err, &re) {
			fmt.Fprintf(c.App.ErrWriter, "multi run: %v\n", err)
			if code == 0 {
				code = exitFailed
			}
		}
		return code, nil
	})
}

// runGrammar: run starts nodes and stops them on a signal.
var runGrammar = grammar{signal: true, endsNodes: true, forward: true, starts: true, names: true, project: true}

// logfileGiven reports whether a logfile was given, for all nodes or one.
func logfileGiven(a *call) bool {
	if a.LogFile != "" {
		return true
	}
	for _, nf := range a.NodeFiles {
		if nf.Name == "logfile" {
			return true
		}
	}
	return false
}
