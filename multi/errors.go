package multi

import (
	"errors"
	"fmt"
	"time"

	"github.com/multi-launcher/multi/internal/launch"
	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/internal/ready"
	"github.com/multi-launcher/multi/internal/supervise"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// Errors that callers test with [errors.Is] on a [*NodeError] or on the
// joined error a verb returns; the error's text says more.
var (
	ErrAlreadyRunning       = pidfile.ErrAlreadyRunning                    // start: the node runs already
	ErrNoCommand            = errors.New("no command (give one after --)") // start: no command for the node
	ErrCommandNotFound      = launch.ErrCommandNotFound                    // the node's program does not exist
	ErrCommandNotExecutable = launch.ErrCommandNotExecutable               // the program cannot be executed
	ErrExitedAtOnce         = launch.ErrExitedAtOnce                       // the command exited before it was seen holding its lock
	ErrTaskLimit            = launch.ErrTaskLimit                          // no process or thread could be made (RLIMIT_NPROC, pids.max)
	ErrHolderMismatch       = pin.ErrHolderMismatch                        // the lock holder is not the process the record names: not signalled
	ErrOwnNode              = pin.ErrOwnNode                               // the node's lock is held by the calling process itself: not signalled
	ErrNotifySocketGone     = ready.ErrSocketGone                          // start: the node's notify socket was removed before it said READY=1
	ErrLost                 = errors.New("lost")                           // the process the record names runs without its lock (see [LostError])
	ErrNotReady             = ready.ErrNotReady                            // start: the node exited, or was stopped, before it passed its readiness check
	// ErrDuplicateNode: two nodes of one Cluster share a name or a
	// pidfile; every verb but Status refuses the whole set.
	ErrDuplicateNode = errors.New("duplicate node")
	ErrUnknownNode   = errors.New("no such node") // [Cluster.Only]: a name that is not one of the nodes
	ErrRunUnderWay   = supervise.ErrRunUnderWay   // [Cluster.Run]: another run is under way in this process
	// ErrSupervised: start, restart: the node is one a multi run in
	// another process supervises; its error names the run's pid.
	ErrSupervised = errors.New("supervised by multi run")
	// ErrOtherCommand: start: the node runs already, with another command
	// or working folder than the one given (not counted as started).
	ErrOtherCommand = errors.New("already running another command")
	// ErrOthersPidfile: stop, stopwait, kill, send, restart: the pidfile
	// given for the node is another node's, held by the process that
	// node's record names; nothing is signalled.
	ErrOthersPidfile = errors.New("another node's pidfile; not signalled")
	// ErrFileClash: start, restart, run: a node's logfile is a pidfile of
	// the set, or its pidfile or logfile is one of the rundir's own files
	// (a record, a lock); nothing is done.
	ErrFileClash = errors.New("files clash")
	// ErrLingering: start: the node's lock is free while processes of its
	// last tree are left (see [LingeringError]).
	ErrLingering = errors.New("lingering")
)

// The verbs' other errors, which callers read as text.
var (
	errCannotRestart     = errors.New("cannot start again; left as it was")
	errRollingHalted     = errors.New("not restarted: the rolling restart halted")
	errStopSignal        = errors.New("a stop signal never ends a node; the wait would never end")
	errStopping          = errors.New("still stopping")
	errUnconfirmedHolder = errors.New("lock holder not confirmed by the node's record; not signalled")
)

// A LostError reports a lost node: nothing holds its pidfile's lock (the
// node closed the descriptor, or its pidfile was deleted), yet the process
// its record names, with the same pid and start time, still runs. It
// cannot be found through its lock, so it is neither counted stopped nor
// started a second time; it is signalled only with [StopOptions.Lost].
type LostError struct {
	PID     int
	Started time.Time
	// Start: the error refuses to start the node (rather than to signal).
	Start bool
}

func (e *LostError) Error() string {
	s := fmt.Sprintf("lost: pid %d (started %s) still runs without its pidfile's lock", e.PID, e.Started.Format(time.DateTime))
	if e.Start {
		return s + "; refusing to start a second copy (stop it with --lost)"
	}
	return s + "; not signalled (use --lost to signal it)"
}

// Is makes errors.Is(err, ErrLost) true.
func (e *LostError) Is(target error) bool { return target == ErrLost }

// A NodeError records a verb that failed on one node.
type NodeError struct {
	Node string // short name
	Op   string // "start", "stop", "stopwait", "kill", "restart", "status"
	Err  error
}

func (e *NodeError) Error() string { return "multi: " + e.Op + " " + e.Node + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *NodeError) Unwrap() error { return e.Err }

// DefaultSettle is the settle window when [Cluster.Settle] is zero: long
// enough to see a command fail on a bad option or a taken port, short
// enough that a batch, which pays it once, hardly notices.
const DefaultSettle = 300 * time.Millisecond
