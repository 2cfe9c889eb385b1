package engine

import (
	"errors"
	"fmt"
	"time"
)

// The errors of the verbs; package multi documents them and exports
// each, as the same value.
var (
	ErrDuplicateNode = errors.New("duplicate node")
	ErrNoCommand     = errors.New("no command (give one after --)")
	ErrCannotRestart = errors.New("cannot start again; left as it was")
	ErrRollingHalted = errors.New("not restarted: the rolling restart halted")
	ErrStopSignal    = errors.New("a stop signal never ends a node; the wait would never end")
	ErrStopping      = errors.New("still stopping")
	ErrLost          = errors.New("lost")
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
