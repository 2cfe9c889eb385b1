package multi

import (
	"errors"
	"fmt"
	"time"

	"github.com/multi-launcher/multi/internal/engine"
	"github.com/multi-launcher/multi/internal/launch"
	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/internal/supervise"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// Errors that callers test with [errors.Is] on a [*NodeError] or on the
// joined error a verb returns; the error's text says more.
var (
	ErrAlreadyRunning       = pidfile.ErrAlreadyRunning      // start: the node runs already
	ErrNoCommand            = engine.ErrNoCommand            // start: no command for the node
	ErrCommandNotFound      = launch.ErrCommandNotFound      // the node's program does not exist
	ErrCommandNotExecutable = launch.ErrCommandNotExecutable // the program cannot be executed
	ErrExitedAtOnce         = launch.ErrExitedAtOnce         // the command exited before it was seen holding its lock
	ErrTaskLimit            = launch.ErrTaskLimit            // no process or thread could be made (RLIMIT_NPROC, pids.max)
	ErrHolderMismatch       = pin.ErrHolderMismatch          // the lock holder is not the process the record names: not signalled
	ErrLost                 = engine.ErrLost                 // the process the record names runs without its lock (see [LostError])
	ErrNotReady             = engine.ErrNotReady             // start: the node exited, or was stopped, before it passed its readiness check
	// ErrDuplicateNode: two nodes of one Cluster share a name or a
	// pidfile; every verb but Status refuses the whole set.
	ErrDuplicateNode = engine.ErrDuplicateNode
	ErrUnknownNode   = errors.New("no such node") // [Cluster.Only]: a name that is not one of the nodes
	ErrRunUnderWay   = supervise.ErrRunUnderWay   // [Cluster.Run]: another run is under way in this process
	// ErrSupervised: start, restart: the node is one a multi run in
	// another process supervises; its error names the run's pid.
	ErrSupervised = engine.ErrSupervised
	// ErrOtherCommand: start: the node runs already, with another command
	// or working folder than the one given (not counted as started).
	ErrOtherCommand = engine.ErrOtherCommand
	// ErrOthersPidfile: stop, stopwait, kill, send, restart: the pidfile
	// given for the node is another node's, held by the process that
	// node's record names; nothing is signalled.
	ErrOthersPidfile = engine.ErrOthersPidfile
	// ErrFileClash: start, restart, run: a node's logfile is a pidfile of
	// the set, or its pidfile or logfile is one of the rundir's own files
	// (a record, a lock); nothing is done.
	ErrFileClash = engine.ErrFileClash
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
