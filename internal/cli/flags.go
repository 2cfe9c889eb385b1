package cli

import (
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/urfave/cli/v2"
)

// Every flag of every command is defined here; a command lists the ones
// it takes, and parseCommand derives multi's grammar from that list.
var (
	flagPidfile = &cli.StringFlag{Name: "pidfile", Usage: "pidfile `TEMPLATE` (%n is the node name); per node: --pidfile:w1=PATH", DefaultText: "RUNDIR/%n.pid"}
	flagLogfile = &cli.StringFlag{Name: "logfile", Usage: "logfile `TEMPLATE`; the node's stdout and stderr are appended to it", DefaultText: "RUNDIR/%n.log"}
	flagRundir  = &cli.StringFlag{Name: "rundir", Usage: "`DIR` of default pidfiles, logfiles and node records", EnvVars: []string{"MULTI_RUNDIR"}, DefaultText: "/run/multi as root, else $XDG_RUNTIME_DIR/multi or /tmp/multi-UID"}
	flagTimeout = &cli.StringFlag{Name: "timeout", Usage: "after `DURATION` (10s, 1m, or seconds) nodes still running get SIGKILL", DefaultText: "wait forever"}
	flagWait    = &cli.StringFlag{Name: "wait", Usage: "how to wait for locks to be released: `MODE` poll, or notify (fsnotify and pidfd wake-ups)", Value: "poll"}
	flagSettle  = &cli.StringFlag{Name: "settle", Usage: "a node that exits within `DURATION` of its start has FAILED; paid once per batch; 0: no window", DefaultText: multi.DefaultSettle.String()}
	flagLost    = &cli.BoolFlag{Name: "lost", Usage: "also signal a lost node (its lock gone, its recorded process running), through a pidfd after checking its start time"}
	flagRolling = &cli.BoolFlag{Name: "rolling", Usage: "restart one node at a time, each up again before the next is signalled (never two down at once)"}
	flagGroup   = &cli.BoolFlag{Name: "group", Usage: "signal each node's whole process group, so what it forked gets the signal too"}
	flagJSON    = &cli.BoolFlag{Name: "json", Usage: "print a JSON array, one object per node"}
	flagShared  = &cli.BoolFlag{Name: "allow-shared-folders", Usage: "accept a rundir, pidfile or logfile folder that others than root and you can write to; records there are then neither written nor read"}
	flagFollow  = &cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing what is appended, until interrupted"}

	flagEnv         = &cli.StringFlag{Name: "env", Usage: "add `KEY=VALUE` to the nodes' environment (give it again for more); recorded, so restart passes it again"}
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
	return append(flags, flagPrefix, flagSuffix, flagHostname, flagRangePrefix, flagQuiet, flagVerbose, flagNoColor, flagShared)
}
