package multi

import (
	"errors"
	"fmt"
	"time"

	"github.com/multi-launcher/multi/internal/engine"
	"github.com/multi-launcher/multi/internal/launch"
	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// Errors that callers test with [errors.Is] on a [*NodeError] or on the
// joined error a verb returns.
var (
	// ErrExitedAtOnce: the node's command exited before start could see it
	// holding its lock.
	ErrExitedAtOnce = launch.ErrExitedAtOnce
	// ErrNoLock: a self-locking node did not take its lock, or did not
	// write its pid in the pidfile it locked, in time.
	ErrNoLock = launch.ErrNoLock
	// ErrCommandNotFound: the node's program does not exist (not in $PATH,
	// or no such file).
	ErrCommandNotFound = launch.ErrCommandNotFound
	// ErrCommandNotExecutable: the node's program exists but cannot be
	// executed (no permission, not a program).
	ErrCommandNotExecutable = launch.ErrCommandNotExecutable
	// ErrTaskLimit: a node was not started because no task (process or
	// thread) could be made for it: the user's RLIMIT_NPROC (ulimit -u),
	// the cgroup's pids.max (systemd's TasksMax=, docker --pids-limit) or
	// the kernel refused one. Under such a limit a start starts fewer
	// nodes at once and makes the threads it needs first; the error names
	// the limit.
	ErrTaskLimit = launch.ErrTaskLimit
	// ErrUnsafePID: the kernel named a pid that must never be signalled
	// (<= 1, or this process).
	ErrUnsafePID = pin.ErrUnsafePID
	// ErrElsewhere: the lock is held by a process that cannot be named from
	// here (another pid namespace); it is not signalled.
	ErrElsewhere = pin.ErrElsewhere
	// ErrOwnNode: the node's lock is held by the calling process itself (a
	// program that locked the pidfile with pidfile.Acquire or OwnFromEnv
	// and drives a Cluster too): nothing is signalled, and the lock is
	// kept.
	ErrOwnNode = pin.ErrOwnNode
	// ErrHolderMismatch: the node's pidfile is locked, but not by the
	// process the node's record names (the pidfile was replaced, say by
	// another node's); nothing is signalled, and the error names both pids.
	ErrHolderMismatch = pin.ErrHolderMismatch
	// ErrAlreadyRunning: start found the node's pidfile locked by a live
	// process.
	ErrAlreadyRunning = pidfile.ErrAlreadyRunning
	// ErrDuplicateNode: two nodes of one Cluster have the same name or
	// the same pidfile (the nodes of two Specs appended, say, which
	// [nodes.Join] refuses already), so they would race for one
	// lock. Every verb but Status (Start, Restart, Run, Stop, Send,
	// StopWait, Kill) refuses the whole set before it does anything;
	// every result fails with it.
	ErrDuplicateNode = engine.ErrDuplicateNode
	// ErrNoCommand: start has no command for the node.
	ErrNoCommand = engine.ErrNoCommand
	// ErrCannotRestart: Restart found that a node's command could not be
	// started again (its folder gone, its program not found or not
	// executable), so it left the node as it was. It is joined with
	// [launch.ErrCommandNotFound] or [launch.ErrCommandNotExecutable] where one applies.
	ErrCannotRestart = engine.ErrCannotRestart
	// ErrRollingHalted: a rolling Restart stopped at a node that did not
	// come up again, and left this node as it was.
	ErrRollingHalted = engine.ErrRollingHalted
	// ErrForeignLock: the node's pidfile is locked, but not as a node
	// locks it (a read lock, an OFD lock, a lock on part of the file); the
	// locker is named, and never signalled. See [pidfile.ForeignError].
	ErrForeignLock = pidfile.ErrForeignLock
	// ErrStopSignal: StopWait or Restart was asked to send a signal that
	// stops a process without ending it, so the wait could never end.
	ErrStopSignal = engine.ErrStopSignal
	// ErrStopping: Start found the node's recorded process exiting, its
	// lock let go, and still exiting after a while: started now, the node
	// would run beside it.
	ErrStopping = engine.ErrStopping
	// ErrUnconfirmedHolder: a node's pidfile is in a folder others can
	// write to ([Cluster.AllowSharedFolders]), and its lock holder is not
	// the process the node's record names, or no record names one: not
	// signalled.
	ErrUnconfirmedHolder = engine.ErrUnconfirmedHolder
	// ErrUnknownNode: [Cluster.Only] was given a name that is not one of
	// the cluster's nodes.
	ErrUnknownNode = errors.New("no such node")
	// ErrLost: the node's lock is gone but the process its record names
	// (same pid, same start time) still runs; see [LostError].
	ErrLost = engine.ErrLost
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

// DefaultLockTimeout is how long Start waits for a self-locking node to
// take its lock when [Cluster.LockTimeout] is zero.
const DefaultLockTimeout = launch.DefaultLockTimeout

// DefaultSettle is the settle window when [Cluster.Settle] is zero: long
// enough for a command that fails on a bad option, a missing file or a
// taken port to be seen exiting, short enough that a batch, which pays it
// once, hardly notices. supervisord's startsecs is 1 s, per program.
const DefaultSettle = engine.DefaultSettle
