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

// Errors that callers test with [errors.Is] on a verb's error.
var (
	ErrAlreadyRunning       = pidfile.ErrAlreadyRunning // the node's lock is held already
	ErrNoCommand            = errors.New("no command (give one after --)")
	ErrCommandNotFound      = launch.ErrCommandNotFound      // also exec.ErrNotFound
	ErrCommandNotExecutable = launch.ErrCommandNotExecutable //
	ErrExitedAtOnce         = launch.ErrExitedAtOnce         // before it was seen holding its lock
	ErrTaskLimit            = launch.ErrTaskLimit            // RLIMIT_NPROC, pids.max: no process could be made
	ErrHolderMismatch       = pin.ErrHolderMismatch          // the lock holder is not the recorded process: not signalled
	ErrOwnNode              = pin.ErrOwnNode                 // the lock holder is the calling process: not signalled
	ErrNotifySocketGone     = ready.ErrSocketGone            // the node's notify socket was removed before READY=1
	ErrLost                 = errors.New("lost")             // see [LostError]
	ErrNotReady             = ready.ErrNotReady              // exited, or stopped, before it passed its readiness check
	ErrDuplicateNode        = errors.New("duplicate node")   // two nodes share a name or a pidfile: nothing done
	ErrUnknownNode          = errors.New("no such node")     // [Cluster.Only]
	ErrRunUnderWay          = supervise.ErrRunUnderWay       // [Cluster.Run]: one run per process
	ErrSupervised           = errors.New("supervised by multi run")
	ErrOtherCommand         = errors.New("already running another command") // not counted as started
	ErrOthersPidfile        = errors.New("another node's pidfile; not signalled")
	ErrFileClash            = errors.New("files clash") // a logfile is a pidfile, or one of the rundir's own files
	ErrLingering            = errors.New("lingering")   // see [LingeringError]
	ErrNeedGraph            = errors.New("bad after")   // a cycle of [nodes.Node.After], or a need naming no node: nothing done
	ErrNeedUnmet            = errors.New("need unmet")  // a node it needs failed, or is down: not started (or one it needs not stopped)

	// ErrLimitUnavailable: a node's cgroup v2 limit ([nodes.Limits])
	// cannot apply here (no cgroup of its own, or its controller not
	// available to multi): nothing done.
	ErrLimitUnavailable = errors.New("limit cannot apply here")
)

// The verbs' other errors, which callers read as text.
var (
	errCannotRestart     = errors.New("cannot start again; left as it was")
	errRollingHalted     = errors.New("not restarted: the rolling restart halted")
	errStopSignal        = errors.New("a stop signal never ends a node; the wait would never end")
	errStopping          = errors.New("still stopping")
	errUnconfirmedHolder = errors.New("lock holder not confirmed by the node's record; not signalled")
)

// A LostError reports a lost node: nothing holds its pidfile's lock, yet
// the process its record names runs ([StopOptions.Lost] signals it).
type LostError struct {
	PID     int
	Started time.Time
	Start   bool // it refuses a start, not a signal
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

// A NodeError records a verb (Op) that failed on one node.
type NodeError struct {
	Node, Op string
	Err      error
}

func (e *NodeError) Error() string { return "multi: " + e.Op + " " + e.Node + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *NodeError) Unwrap() error { return e.Err }

// DefaultSettle is the settle window when [Cluster.Settle] is zero.
const DefaultSettle = 300 * time.Millisecond
