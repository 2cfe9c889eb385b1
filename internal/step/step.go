// Package step is the exec step: a node's own process, started as this
// very program, before it execs the node's command. It locks the
// pidfile, joins the node's cgroup, opens the logfile and execs the
// command, keeping the locked descriptor open across the exec.
//
// Its init function runs the step, in a process that package launch
// started with [Env] set, and never returns there. The package imports
// only what the step needs (no regexp, net, text/template, encoding/json
// or urfave/cli), so that Go's package initialisation, which runs a
// package as soon as its imports have run, the lexically smallest first,
// reaches it right after os and x/sys/unix: the rest of the program's
// packages are never initialised in a node's process. main imports it
// first; any binary that imports package launch links it too (the test
// binaries that start nodes re-execute themselves as the step).
package step

// Env marks a process started as the exec step of one node. The step
// removes it before it execs the node's command, so nodes never see it.
const Env = "_MULTI_EXEC_STEP_V1"

// The values of [Env]: the step locks the pidfile, or the node will.
const (
	Lock     = "1"
	SelfLock = "self"
)

// ErrFD is the exec step's descriptor for reporting failure: the write
// end of a pipe whose read end the launcher drains. It is close-on-exec
// in the step, so a successful exec closes it with nothing written.
const ErrFD = 3

// DirEnv says the exec step has its node's working folder open as
// [DirFD], to change to.
const DirEnv = "_MULTI_STEP_DIR"

// DirFD is the working folder's descriptor in the exec step, after
// [ErrFD].
const DirFD = ErrFD + 1

// CgroupEnv names the descriptor of the node's cgroup folder in the
// exec step, which it joins once it holds the lock.
const CgroupEnv = "_MULTI_STEP_CGROUP"

// PathEnv carries the $PATH the step looks the command up on ("" for
// none, else "=" and the value).
const PathEnv = "_MULTI_LOOKUP_PATH"

// ProcsEnv carries the GOMAXPROCS the node is to have ("" for none,
// else "=" and the value): the step runs with GOMAXPROCS=1, since a Go
// runtime starts faster with one P, and it lives only until the exec.
const ProcsEnv = "_MULTI_GOMAXPROCS"

// ReadyEnv says, for a node with an fd:N readiness check (s6's
// notification-fd), which descriptor of the step holds the write end of
// the readiness pipe and which the node is to find it on: "FROM:N".
const ReadyEnv = "_MULTI_STEP_READY_FD"

// The exec step's run mode: OutEnv keeps the inherited stdout and
// stderr (a foreground run's pipes) instead of opening the logfile;
// StandbyEnv waits for a held lock instead of failing.
const (
	OutEnv     = "_MULTI_STEP_INHERIT_OUTPUT"
	StandbyEnv = "_MULTI_STEP_WAIT_LOCK"
)

// LimitsEnv carries the rlimits the step sets right before its exec,
// soft and hard: "NAME=SOFT:HARD,..." (NAME nofile, nproc, core or as;
// the values decimal, 18446744073709551615 for infinity).
const LimitsEnv = "_MULTI_STEP_LIMITS"

// LogFDEnv names the descriptor of the write end of the pipe to the
// node's log writer (package logwriter), for a node whose logfile is
// kept under a size: the step makes it the node's stdout and stderr
// instead of opening the logfile.
const LogFDEnv = "_MULTI_STEP_LOG_FD"
