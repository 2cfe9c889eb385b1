package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/urfave/cli/v2"
)

// The flags only run takes.
var (
	flagOnExit      = &cli.StringFlag{Name: "on-exit", Usage: "when a node exits on its own: `POLICY` stop-all (stop the others, exit with its status), restart (with backoff), ignore", Value: string(multi.StopAll)}
	flagReadyFile   = &cli.StringFlag{Name: "ready-file", Usage: "create `FILE` once every node holds its lock; removed when stopping (a readiness probe)"}
	flagWaitForLock = &cli.BoolFlag{Name: "wait-for-lock", Usage: "a node whose lock is held elsewhere (a shared pidfile folder) waits for it and takes over when the holder dies, instead of failing the run"}
	flagBackoff     = &cli.StringFlag{Name: "backoff", Usage: "with --on-exit=restart, the first delay `DURATION`; it doubles with each restart, up to 1m", DefaultText: multi.DefaultBackoff.String()}
	flagRunTimeout  = &cli.StringFlag{Name: "timeout", Usage: "after the stop signal, `DURATION` before the nodes still running get SIGKILL", DefaultText: multi.DefaultRunTimeout.String()}
)

// ownSignals, in the app's Metadata, says that the verb handled SIGINT and
// SIGTERM itself (run: they stop the nodes) and its exit code stands.
const ownSignals = "own-signals"

// runCommand is multi run: the nodes in the foreground, as a container's
// PID 1 or a systemd Type=notify service.
func runCommand(code *int) *cli.Command {
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
code, or 128+signal; 127 program not found, 126 not executable); after a
stop, 0 when every node exited 0 or by the stop signal. A node stopped with
multi stop/stopwait from another shell is not a failure. READY=1 and
STOPPING=1 go to $NOTIFY_SOCKET (systemd Type=notify).

   multi run w1 w2 w3 -- worker --name=%n
   multi run 4 --on-exit=restart --ready-file=/tmp/ready -- app
   multi run w1 --wait-for-lock --pidfile=/shared/%n.pid -- app`,
		Flags: common(flagPidfile, flagLogfile, flagRundir, flagRunTimeout, flagWait, flagGroup, flagSelfLock, flagLockTimeout, flagEnv,
			flagOnExit, flagReadyFile, flagWaitForLock, flagBackoff),
	}, true, func(c *cli.Context, a *Args) error {
		c.App.Metadata[ownSignals] = true
		cl, err := cluster(c, a)
		if err != nil {
			return err
		}
		if !a.HasCommand {
			for _, n := range cl.Nodes {
				if len(n.Command) == 0 {
					return usage(c, fmt.Errorf("%s: no command: give one after -- (no record %s)", n.Name, nodes.RecordPath(cl.RunDir, n.Name)))
				}
			}
		}
		if multi.IsStopSignal(cl.Signal) {
			return usage(c, fmt.Errorf("-%s stops a node without ending it: run would wait forever", a.Signal))
		}
		opts := multi.RunOptions{ReadyFile: a.Flags["ready-file"], WaitForLock: a.Flags["wait-for-lock"] == "true",
			Log: c.App.ErrWriter}
		if opts.OnExit, err = multi.ParseOnExit(a.Flags["on-exit"]); err != nil {
			return usage(c, err)
		}
		if t := a.Flags["backoff"]; t != "" {
			if opts.Backoff, err = parseTimeout("--backoff", t); err != nil {
				return usage(c, err)
			}
		}
		if !logfileGiven(a) {
			opts.Stdout, opts.Stderr = c.App.Writer, c.App.ErrWriter
		}
		cl.Detach = false
		o := newOutput(c, a)
		o.w = c.App.ErrWriter // stdout is the nodes'
		cl.Progress = o.result
		// The run handles TERM and INT itself (the first stops, the second
		// kills): the context they cancel is not its business.
		*code, err = cl.Run(context.WithoutCancel(c.Context), opts)
		// A RunError's nodes have said it already, through Progress and
		// the run's log.
		var re *multi.RunError
		if err != nil && !errors.As(err, &re) {
			fmt.Fprintf(c.App.ErrWriter, "multi run: %v\n", err)
			if *code == 0 {
				*code = exitFailed
			}
		}
		return nil
	})
}

// logfileGiven reports whether a logfile was given, for all nodes or one.
func logfileGiven(a *Args) bool {
	if a.Flags["logfile"] != "" {
		return true
	}
	for _, nf := range a.NodeFlags {
		if nf.Name == "logfile" {
			return true
		}
	}
	return false
}
