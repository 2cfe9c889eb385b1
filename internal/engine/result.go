package engine

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// A Result is what a verb did to one node: package multi's Result, which
// documents each field, and the verb's own state. multi converts it
// field by field.
type Result struct {
	Node        nodes.Node
	Outcome     Outcome
	PID         int
	Signal      syscall.Signal
	KilledAfter time.Duration
	OldPID      int
	FilePID     int
	HeldBy      int
	TookOver    bool
	Lost        bool
	Lingering   int // processes killed in the node's cgroup: lingering, or left after the timeout
	Exit        *ExitStatus
	RecordErr   error
	Err         error // a *NodeError
	Elapsed     time.Duration

	begun time.Time
	lost  nodes.Started // the lost process signalled (StopOptions.Lost), if any
}

// An ExitStatus is how a node's process ended (package multi's).
type ExitStatus struct {
	Code   int
	Signal syscall.Signal
}

// An Outcome is what a verb did to one node: package multi's Outcome,
// value for value.
type Outcome int

// The outcomes, in package multi's order.
const (
	NoOutcome Outcome = iota
	Started
	Restarted
	AlreadyRunning
	Signalled
	Stopped
	Killed
	KilledAfterTimeout
	NotRunning
	StaleRemoved
	Lost
	Failed
)

// exitStatus is ws as an ExitStatus.
func exitStatus(ws syscall.WaitStatus) *ExitStatus {
	if ws.Signaled() {
		return &ExitStatus{Code: -1, Signal: ws.Signal()}
	}
	return &ExitStatus{Code: ws.ExitStatus()}
}

// joinErrs joins the per-node errors of results, nil when there are none.
// It also stamps each result's Elapsed, if not yet done: every verb
// returns through it.
func joinErrs(results []Result) error {
	var errs []error
	for i := range results {
		results[i].stamp()
		if r := results[i]; r.Err != nil {
			errs = append(errs, r.Err)
		}
	}
	return errors.Join(errs...)
}

// recordErr adds err, about the node's record, to r's.
func (r *Result) recordErr(err error) {
	if r.RecordErr != nil {
		err = fmt.Errorf("%w; %w", r.RecordErr, err)
	}
	r.RecordErr = err
}

func (r *Result) fail(op string, err error) {
	r.Err = &NodeError{Node: r.Node.Name, Op: op, Err: err}
	switch {
	case errors.Is(err, pidfile.ErrAlreadyRunning):
		r.Outcome = AlreadyRunning
	case errors.Is(err, ErrLost):
		r.Outcome = Lost
	default:
		r.Outcome = Failed
	}
}

// stamp sets r.Elapsed once, when r is final.
func (r *Result) stamp() {
	if r.Elapsed == 0 && !r.begun.IsZero() {
		r.Elapsed = max(time.Since(r.begun), 1)
	}
}
