package cli

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/celery"
	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/waiter"
	"github.com/urfave/cli/v2"
)

// flags are multi's own flags on a command line, typed. A verb reads the
// fields of the flags it declares; the others keep their zero value.
type flags struct {
	PidFile, LogFile, RunDir      string
	Prefix, Hostname, RangePrefix string
	// Suffix is nil when --suffix is not given; "" means no host part.
	Suffix *string

	Quiet, Verbose, NoColor, JSON bool
	AllowSharedFolders            bool

	Group, Lost, Rolling, SelfLock, WaitForLock, Follow bool
	// DryRun and Prune are apply's.
	DryRun, Prune bool
	// Timestamps and LogFormat ("text" or "json") are run's, for the
	// nodes' lines it prints.
	Timestamps bool
	LogFormat  string
	// All: without names, every recorded node, not this project's only.
	All bool
	// Lines is how many of each logfile's last lines logs prints; -1: all.
	Lines int

	// Timeout and the others are 0 when not given. Settle is -1 for
	// --settle=0 (no window), as in [multi.Cluster].
	Timeout, LockTimeout, Settle, Backoff time.Duration

	Wait      waiter.Strategy
	OnExit    multi.OnExit
	ReadyFile string
	// Env holds every --env, in order; EnvFiles every --env-file.
	Env, EnvFiles []string
	// Ready is --ready, the nodes' readiness check; ReadyTimeout is 0
	// when not given.
	Ready        string
	ReadyTimeout time.Duration
	// ReadyOnly is status's --ready.
	ReadyOnly bool
	// Watch is status's --watch; Interval its --interval, 0 when not
	// given (defaultWatchInterval).
	Watch    bool
	Interval time.Duration
	// MaxUnavailable is restart's --max-unavailable, 0 when not given;
	// MaxRestarts and RestartWindow run's crash-loop limit.
	MaxUnavailable, MaxRestarts int
	RestartWindow               time.Duration
	// Health is run's --health; Live, LiveInterval and LiveFailures its
	// liveness check (0 when not given).
	Health, Live string
	LiveInterval time.Duration
	LiveFailures int
	// Clean and KillMode: a node's tree (its cgroup) at start.
	Clean    bool
	KillMode string
	// Limits are the --limit-* and cgroup limit flags given.
	Limits nodes.Limits

	// Signal is the -SIGNAL given, 0 if none; SignalText is it as written
	// (without the dash).
	Signal     syscall.Signal
	SignalText string
}

// A typedFlag is one of multi's flags: the urfave/cli flag that help, the
// manual page and completion show, and how a value given stores into
// [flags]. A flag whose urfave/cli flag has a Value is stored with that
// Value when it is not given, or given empty: it is the flag's one default.
type typedFlag interface {
	cli.DocGenerationFlag
	store(f *flags, value string) error
	// repeats: every value given is stored, in order (--env); of other
	// flags only the last one given counts.
	repeats() bool
	// perNode: the flag may also be given for some nodes, as celery's
	// --pidfile:w1=PATH; those values go to the call's NodeFiles.
	perNode() bool
}

// A boolFlag takes no value: given, its field is true.
type boolFlag struct {
	*cli.BoolFlag
	field func(*flags) *bool
}

func (b *boolFlag) store(f *flags, _ string) error { *b.field(f) = true; return nil }
func (b *boolFlag) repeats() bool                  { return false }
func (b *boolFlag) perNode() bool                  { return false }

// A valueFlag takes a value, which set checks and stores, typed.
type valueFlag struct {
	*cli.StringFlag
	set   func(f *flags, value string) error
	many  bool // given many times, every value counts
	nodes bool // may be given per node
}

func (v *valueFlag) store(f *flags, value string) error { return v.set(f, value) }
func (v *valueFlag) repeats() bool                      { return v.many }
func (v *valueFlag) perNode() bool                      { return v.nodes }

// help is the same flag with its own help text, for a verb where it
// means something more particular (run's --timeout).
func (v *valueFlag) help(usage, defaultText string) *valueFlag {
	sf := *v.StringFlag
	sf.Usage, sf.DefaultText = usage, defaultText
	return &valueFlag{StringFlag: &sf, set: v.set, many: v.many, nodes: v.nodes}
}

func boolean(f cli.BoolFlag, field func(*flags) *bool) *boolFlag {
	return &boolFlag{BoolFlag: &f, field: field}
}

func text(f cli.StringFlag, field func(*flags) *string) *valueFlag {
	return &valueFlag{StringFlag: &f, set: func(fl *flags, v string) error { *field(fl) = v; return nil }}
}

// path is text for a flag that names a file or folder: given, it may not
// be empty (an unset variable in a script, --rundir=$DIR, would
// otherwise mean the default, perhaps another user's rundir).
func path(f cli.StringFlag, field func(*flags) *string) *valueFlag {
	return &valueFlag{StringFlag: &f, set: func(fl *flags, v string) error {
		if v == "" {
			return fmt.Errorf("--%s: empty (give a path, or leave the flag out for the default)", f.Name)
		}
		*field(fl) = v
		return nil
	}}
}

// duration is a flag whose value is a positive duration or a number of
// seconds.
func duration(f cli.StringFlag, field func(*flags) *time.Duration) *valueFlag {
	return &valueFlag{StringFlag: &f, set: func(fl *flags, v string) (err error) {
		if v == "" {
			*field(fl) = 0 // as if not given
			return nil
		}
		*field(fl), err = parseTimeout("--"+f.Name, v)
		return err
	}}
}

// perNode is the flag f, which may also be given per node.
func perNode(f *valueFlag) *valueFlag { f.nodes = true; return f }

// Every flag of every command is defined here; a command lists the ones
// it takes, and parseCommand derives multi's grammar from that list.
var (
	flagPidfile = perNode(path(cli.StringFlag{Name: "pidfile", Usage: "pidfile `TEMPLATE` (%n is the node name); per node: --pidfile:w1=PATH", DefaultText: "RUNDIR/%n.pid"}, func(f *flags) *string { return &f.PidFile }))
	flagLogfile = perNode(path(cli.StringFlag{Name: "logfile", Usage: "logfile `TEMPLATE`; the node's stdout and stderr are appended to it", DefaultText: "RUNDIR/%n.log"}, func(f *flags) *string { return &f.LogFile }))
	flagRundir  = path(cli.StringFlag{Name: "rundir", Usage: "`DIR` of default pidfiles, logfiles and node records", EnvVars: []string{"MULTI_RUNDIR"}, DefaultText: "/run/multi as root, else $XDG_RUNTIME_DIR/multi or /tmp/multi-UID"}, func(f *flags) *string { return &f.RunDir })
	flagTimeout = duration(cli.StringFlag{Name: "timeout", Usage: "after `DURATION` (10s, 1m, or seconds) nodes still running get SIGKILL", DefaultText: "wait forever"}, func(f *flags) *time.Duration { return &f.Timeout })
	flagWait    = &valueFlag{StringFlag: &cli.StringFlag{Name: "wait", Usage: "how to wait for locks to be released: `MODE` poll, or notify (fsnotify and pidfd wake-ups)", Value: "poll"}, set: setWait}
	flagSettle  = &valueFlag{StringFlag: &cli.StringFlag{Name: "settle", Usage: "a node that exits within `DURATION` of its start has FAILED; paid once per batch; 0: no window", DefaultText: multi.DefaultSettle.String() + ", " + celery.Settle.String() + " for a celery command"}, set: setSettle}
	flagLost    = boolean(cli.BoolFlag{Name: "lost", Usage: "also signal a lost node (its lock gone, its recorded process running), through a pidfd after checking its start time"}, func(f *flags) *bool { return &f.Lost })
	flagRolling = boolean(cli.BoolFlag{Name: "rolling", Usage: "restart one node at a time, each up again before the next is signalled (never two down at once)"}, func(f *flags) *bool { return &f.Rolling })
	flagGroup   = boolean(cli.BoolFlag{Name: "group", Usage: "signal each node's whole process group, so what it forked gets the signal too"}, func(f *flags) *bool { return &f.Group })
	flagJSON    = boolean(cli.BoolFlag{Name: "json", Usage: "print a JSON array, one object per node"}, func(f *flags) *bool { return &f.JSON })
	flagShared  = boolean(cli.BoolFlag{Name: "allow-shared-folders", Usage: "accept a rundir, pidfile or logfile folder that others than root and you can write to; records there are then neither written nor read"}, func(f *flags) *bool { return &f.AllowSharedFolders })
	flagFollow  = boolean(cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing what is appended, until interrupted"}, func(f *flags) *bool { return &f.Follow })
	flagLines   = &valueFlag{StringFlag: &cli.StringFlag{Name: "lines", Aliases: []string{"n"}, Usage: "print the last `N` lines of each logfile (all: the whole file)", Value: "10"}, set: setLines}

	flagEnv            = &valueFlag{StringFlag: &cli.StringFlag{Name: "env", Usage: "add `KEY=VALUE` to the nodes' environment (give it again for more); recorded, so restart passes it again"}, set: func(f *flags, v string) error { f.Env = append(f.Env, v); return nil }, many: true}
	flagEnvFile        = &valueFlag{StringFlag: &cli.StringFlag{Name: "env-file", Usage: "add the KEY=VALUE lines of `FILE` (systemd's EnvironmentFile= syntax) to the nodes' environment, read at every start; only its path is recorded"}, set: func(f *flags, v string) error { f.EnvFiles = append(f.EnvFiles, v); return nil }, many: true}
	flagSelfLock       = boolean(cli.BoolFlag{Name: "self-lock", Usage: "the node locks its own pidfile (its path is in $MULTI_PIDFILE); start waits for it to"}, func(f *flags) *bool { return &f.SelfLock })
	flagReady          = perNode(text(cli.StringFlag{Name: "ready", Usage: "start waits until each node passes `CHECK`: " + nodes.ReadyKinds + " (%-letters expanded); recorded; per node: --ready:w1=CHECK"}, func(f *flags) *string { return &f.Ready }))
	flagStatusReady    = boolean(cli.BoolFlag{Name: "ready", Usage: "exit 0 only when every node is running and passes its readiness check (a probe); 1 otherwise"}, func(f *flags) *bool { return &f.ReadyOnly })
	flagWatch          = boolean(cli.BoolFlag{Name: "watch", Usage: "stay, and show each node's changes (its state, pid, processes, with --ready its readiness) until Ctrl-C: redrawn in place on a terminal, else a line per change with its time (--json: a JSON object per line)"}, func(f *flags) *bool { return &f.Watch })
	flagInterval       = &valueFlag{StringFlag: &cli.StringFlag{Name: "interval", Usage: "with --watch, look at the nodes every `DURATION` (at least 50ms); a pidfile or record written wakes it sooner", DefaultText: defaultWatchInterval.String()}, set: setInterval}
	flagMaxUnavailable = &valueFlag{StringFlag: &cli.StringFlag{Name: "max-unavailable", Usage: "with --rolling, restart `K` nodes at a time (each group up, and ready, before the next goes down)", DefaultText: "1"}, set: setMaxUnavailable}
	flagMaxRestarts    = &valueFlag{StringFlag: &cli.StringFlag{Name: "max-restarts", Usage: "with --on-exit=restart, a node that exits again after `N` restarts within --restart-window is fatal: left down, its exit status the run's", DefaultText: "no limit"}, set: setMaxRestarts}
	flagRestartWindow  = duration(cli.StringFlag{Name: "restart-window", Usage: "the `DURATION` --max-restarts counts restarts in", DefaultText: "1m"}, func(f *flags) *time.Duration { return &f.RestartWindow })
	flagHealth         = text(cli.StringFlag{Name: "health", Usage: "serve /readyz, /livez and /metrics (Prometheus) on `ADDRESS:PORT` (numeric or localhost) or :PORT"}, func(f *flags) *string { return &f.Health })
	flagLive           = text(cli.StringFlag{Name: "live", Usage: "check each running node's liveness with `CHECK` (tcp:, http:, exec:, file:; %-letters expanded) every --live-interval"}, func(f *flags) *string { return &f.Live })
	flagLiveInterval   = duration(cli.StringFlag{Name: "live-interval", Usage: "run --live every `DURATION`", DefaultText: "10s"}, func(f *flags) *time.Duration { return &f.LiveInterval })
	flagLiveFailures   = &valueFlag{StringFlag: &cli.StringFlag{Name: "live-failures", Usage: "a node failing --live `N` times in a row is stopped, and --on-exit applies (restart: it is restarted)", DefaultText: "3"}, set: setLiveFailures}
	flagReadyTimeout   = duration(cli.StringFlag{Name: "ready-timeout", Usage: "with --ready, a node not ready after `DURATION` is FAILED and stopped", DefaultText: "60s"}, func(f *flags) *time.Duration { return &f.ReadyTimeout })
	flagLockTimeout    = duration(cli.StringFlag{Name: "lock-timeout", Usage: "with --self-lock, wait up to `DURATION` for the node to lock its pidfile, then kill it", DefaultText: "10s"}, func(f *flags) *time.Duration { return &f.LockTimeout })

	flagPrefix      = text(cli.StringFlag{Name: "prefix", Usage: "put `TEXT` before every node name given (not counted ones)"}, func(f *flags) *string { return &f.Prefix })
	flagSuffix      = &valueFlag{StringFlag: &cli.StringFlag{Name: "suffix", Usage: "`HOST` part of full names, as celery's --suffix (\"\" for none); wins over --hostname"}, set: func(f *flags, v string) error { f.Suffix = &v; return nil }}
	flagHostname    = text(cli.StringFlag{Name: "hostname", Usage: "`HOST` part of full names (%h, %n, %d: this machine's)", DefaultText: "this machine's host name"}, func(f *flags) *string { return &f.Hostname })
	flagRangePrefix = text(cli.StringFlag{Name: "range-prefix", Usage: "`PREFIX` of the names a count gives", Value: nodes.DefaultRangePrefix}, func(f *flags) *string { return &f.RangePrefix })

	flagQuiet   = boolean(cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only failures"}, func(f *flags) *bool { return &f.Quiet })
	flagVerbose = boolean(cli.BoolFlag{Name: "verbose", Usage: "also print each node's command line, pidfile and logfile"}, func(f *flags) *bool { return &f.Verbose })
	flagNoColor = boolean(cli.BoolFlag{Name: "no-color", Usage: "no colours (also $NO_COLOR); colours are only ever used on a terminal"}, func(f *flags) *bool { return &f.NoColor })
)

// The flags only run takes.
var (
	flagOnExit      = &valueFlag{StringFlag: &cli.StringFlag{Name: "on-exit", Usage: "when a node exits on its own: `POLICY` stop-all (stop the others, exit with its status), restart (with backoff), ignore", Value: string(multi.StopAll)}, set: setOnExit}
	flagReadyFile   = text(cli.StringFlag{Name: "ready-file", Usage: "create `FILE` once every node holds its lock; removed when stopping (a readiness probe)"}, func(f *flags) *string { return &f.ReadyFile })
	flagWaitForLock = boolean(cli.BoolFlag{Name: "wait-for-lock", Usage: "a node whose lock is held elsewhere (a shared pidfile folder) waits for it and takes over when the holder dies, instead of failing the run"}, func(f *flags) *bool { return &f.WaitForLock })
	flagBackoff     = duration(cli.StringFlag{Name: "backoff", Usage: "with --on-exit=restart, the first delay `DURATION`; it doubles with each restart, up to 1m", DefaultText: "1s"}, func(f *flags) *time.Duration { return &f.Backoff })
	flagRunTimeout  = flagTimeout.help("after the stop signal, `DURATION` before the nodes still running get SIGKILL", multi.DefaultRunTimeout.String())
)

// common adds the flags every command takes to a command's own flags.
func common(flags ...cli.Flag) []cli.Flag {
	return append(flags, flagPrefix, flagSuffix, flagHostname, flagRangePrefix, flagQuiet, flagVerbose, flagNoColor, flagShared)
}

func setWait(f *flags, v string) error {
	switch v {
	case "poll":
		f.Wait = waiter.Poll{}
	case "notify":
		f.Wait = waiter.Notify{}
	default:
		return fmt.Errorf("--wait is poll or notify, not %q", v)
	}
	return nil
}

func setSettle(f *flags, v string) (err error) {
	switch v {
	case "":
		f.Settle = 0 // as if not given: the default window
		return nil
	case "0":
		f.Settle = -1 // no window
		return nil
	}
	f.Settle, err = parseTimeout("--settle", v)
	return err
}

func setOnExit(f *flags, v string) error {
	switch p := multi.OnExit(v); p {
	case multi.StopAll, multi.RestartNode, multi.Ignore:
		f.OnExit = p
	case "":
		f.OnExit = multi.StopAll
	default:
		return fmt.Errorf("--on-exit is stop-all, restart or ignore, not %q", v)
	}
	return nil
}

// flagAll: without names, every recorded node rather than this project's
// (the nodes started in this working folder).
var (
	flagTimestamps = boolean(cli.BoolFlag{Name: "timestamps", Usage: "put the time each line of the nodes' output was read before it (RFC 3339, UTC, microseconds)"}, func(f *flags) *bool { return &f.Timestamps })
	flagLogFormat  = &valueFlag{StringFlag: &cli.StringFlag{Name: "log-format", Usage: "the nodes' lines as `FORMAT` text (\"w1 | line\") or json (one object per line: time, node, stream, line)", Value: "text"}, set: func(f *flags, v string) error {
		if v != "text" && v != "json" {
			return fmt.Errorf("--log-format is text or json, not %q", v)
		}
		f.LogFormat = v
		return nil
	}}
	flagDryRun = boolean(cli.BoolFlag{Name: "dry-run", Usage: "print, per node, what would be done and why; do nothing"}, func(f *flags) *bool { return &f.DryRun })
	flagPrune  = boolean(cli.BoolFlag{Name: "prune", Usage: "also stop and forget the project's recorded nodes it no longer describes"}, func(f *flags) *bool { return &f.Prune })
)

var flagAll = boolean(cli.BoolFlag{Name: "all", Usage: "without NODES or with a count, every recorded node, not only those started in this working folder (this project's)"}, func(f *flags) *bool { return &f.All })

// setMaxUnavailable takes --max-unavailable's K, a count from 1.
func setMaxUnavailable(f *flags, v string) error {
	if v == "" {
		f.MaxUnavailable = 0
		return nil
	}
	k, err := strconv.Atoi(v)
	if err != nil || k < 1 {
		return fmt.Errorf("--max-unavailable wants a count of nodes from 1, not %q", v)
	}
	f.MaxUnavailable = k
	return nil
}

// setInterval takes --interval's DURATION, at least minWatchInterval: a
// shorter one would spend a CPU on looking.
func setInterval(f *flags, v string) (err error) {
	if v == "" {
		f.Interval = 0
		return nil
	}
	if f.Interval, err = parseTimeout("--interval", v); err != nil {
		return err
	}
	if f.Interval < minWatchInterval {
		return fmt.Errorf("--interval wants at least %s, not %q", minWatchInterval, v)
	}
	return nil
}

// setMaxRestarts takes --max-restarts's N, a count from 1.
func setMaxRestarts(f *flags, v string) error {
	if v == "" {
		f.MaxRestarts = 0
		return nil
	}
	k, err := strconv.Atoi(v)
	if err != nil || k < 1 {
		return fmt.Errorf("--max-restarts wants a count of restarts from 1, not %q", v)
	}
	f.MaxRestarts = k
	return nil
}

// setLiveFailures takes --live-failures's N, a count from 1.
func setLiveFailures(f *flags, v string) error {
	if v == "" {
		f.LiveFailures = 0
		return nil
	}
	k, err := strconv.Atoi(v)
	if err != nil || k < 1 {
		return fmt.Errorf("--live-failures wants a count from 1, not %q", v)
	}
	f.LiveFailures = k
	return nil
}

// The flags of a node's tree (its cgroup).
var (
	flagClean    = boolean(cli.BoolFlag{Name: "clean", Usage: "kill what is left in a lingering node's cgroup (its lock free, processes left), then start it"}, func(f *flags) *bool { return &f.Clean })
	flagKillMode = &valueFlag{StringFlag: &cli.StringFlag{Name: "kill-mode", Usage: "how stops treat the node's tree, as systemd's KillMode=: `MODE` mixed (the stop signal to the node, SIGKILL to what is left after --timeout), control-group (the stop signal to all), process (the node only)", DefaultText: "mixed"}, set: setKillMode}
)

func setKillMode(f *flags, v string) error {
	if err := cgroup.CheckKillMode(v); err != nil {
		return fmt.Errorf("--kill-mode: %w", err)
	}
	f.KillMode = v
	return nil
}

// limitFlag is the flag of the node limit name (nodes.LimitNames): it
// sets that limit of every node, checked and recorded.
func limitFlag(name, usage string) *valueFlag {
	flag := nodes.LimitFlag(name)
	return &valueFlag{StringFlag: &cli.StringFlag{Name: strings.TrimPrefix(flag, "--"), Usage: usage}, set: func(f *flags, v string) error {
		if err := f.Limits.Set(name, v); err != nil {
			return fmt.Errorf("%s: %w", flag, err)
		}
		return nil
	}}
}

// The flags of what a node's process may not pass: rlimits, set in its
// process before its exec, and cgroup v2 limits, written into its cgroup
// before it joins.
var (
	flagLimitNofile = limitFlag("nofile", "the nodes' RLIMIT_NOFILE (open files), soft and hard: `N` or SOFT:HARD (infinity: none), as systemd's LimitNOFILE=; recorded")
	flagLimitNproc  = limitFlag("nproc", "the nodes' RLIMIT_NPROC (processes of their user), soft and hard: `N` or SOFT:HARD; recorded")
	flagLimitCore   = limitFlag("core", "the nodes' RLIMIT_CORE, soft and hard: `BYTES` (K, M, G) or SOFT:HARD; 0: no core dumps; recorded")
	flagLimitAS     = limitFlag("as", "the nodes' RLIMIT_AS (address space), soft and hard: `BYTES` (512M, 2G) or SOFT:HARD; recorded")
	flagMemoryMax   = limitFlag("memory_max", "the nodes' cgroup memory.max: `BYTES` (512M, 2G) or max; a start where the memory controller is not multi's fails (multi check says); recorded")
	flagMemoryHigh  = limitFlag("memory_high", "the nodes' cgroup memory.high (throttled above): `BYTES` or max; as --memory-max")
	flagCPUMax      = limitFlag("cpu_max", "the nodes' cgroup cpu.max: `SHARE` of one CPU (50%, 200%), \"QUOTA PERIOD\" in microseconds, or max; as --memory-max, with the cpu controller")
	flagPidsMax     = limitFlag("pids_max", "the nodes' cgroup pids.max: `N` tasks or max; as --memory-max, with the pids controller")
	flagLogMaxSize  = limitFlag("log_max_size", "keep each node's logfile under `BYTES` (from 4K; 10M, 1G): a log writer of its own rotates it to LOGFILE.1, LOGFILE.2, ... and marks where the node started and ended; recorded")
	flagLogKeep     = limitFlag("log_keep", "with --log-max-size, how many rotated logfiles to keep: `N` (0: none; default 5); recorded")
)

// withLimits adds the flags of a node's limits, which every verb that
// starts nodes takes, to a command's own flags.
func withLimits(flags ...cli.Flag) []cli.Flag {
	return append(flags, flagLimitNofile, flagLimitNproc, flagLimitCore, flagLimitAS, flagMemoryMax, flagMemoryHigh, flagCPUMax, flagPidsMax, flagLogMaxSize, flagLogKeep)
}
