package multi

import (
	"errors"
	"fmt"
	"time"

	"github.com/multi-launcher/multi/nodes"
)

// A Result is what a verb did to one node.
type Result struct {
	Node nodes.Node
	// Outcome is what happened, for a program to switch on; Msg says the
	// same for a person.
	Outcome Outcome
	// PID is the node's process: started, signalled or stopped; 0 if none.
	PID int
	// Msg says what happened, for a person: "started (pid 1234)".
	Msg string
	// Warning, if not empty, is something the person should know although
	// the verb did its job: the pidfile's text named another pid than the
	// lock holder, say.
	Warning string
	// Err is non-nil when the verb failed on this node: a [*NodeError].
	Err error
	// Elapsed is how long the verb took on this node, from the verb's
	// start until this result was final.
	Elapsed time.Duration

	begun time.Time

	lost nodes.Started // the lost process signalled (SignalLost), if any
}

// String formats the result as multi prints it: "w1: started (pid 1234)"
// or "w1: FAILED: reason".
func (r Result) String() string {
	if r.Err != nil {
		var ne *NodeError
		if errors.As(r.Err, &ne) {
			return r.Node.Name + ": FAILED: " + ne.Err.Error()
		}
		return r.Node.Name + ": FAILED: " + r.Err.Error()
	}
	return r.Node.Name + ": " + r.Msg
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

// warn adds a warning to r, after any it has.
func (r *Result) warn(w string) {
	if r.Warning != "" {
		r.Warning += "; "
	}
	r.Warning += w
}

func (r *Result) fail(op string, err error) {
	r.Err = &NodeError{Node: r.Node.Name, Op: op, Err: err}
	switch {
	case errors.Is(err, ErrAlreadyRunning):
		r.Outcome = AlreadyRunning
	case errors.Is(err, ErrLost):
		r.Outcome = Lost
	default:
		r.Outcome = Failed
	}
}

// An Outcome is what a verb did to one node ([Result.Outcome]).
type Outcome int

// The outcomes. AlreadyRunning, Lost and Failed come with [Result.Err]
// set; the others without.
const (
	// NoOutcome: the verb has not reached the node.
	NoOutcome Outcome = iota
	// Started: start started the node (PID).
	Started
	// Restarted: restart started again a node it had stopped (PID).
	Restarted
	// AlreadyRunning: start found the node running (PID); not a failure
	// for an init script, but Err matches [ErrAlreadyRunning].
	AlreadyRunning
	// Signalled: Stop sent its signal to the node (PID) and did not wait.
	Signalled
	// Stopped: the node (PID) released its lock after the stop signal.
	Stopped
	// Killed: the node (PID) released its lock after SIGKILL (Kill).
	Killed
	// KilledAfterTimeout: the node (PID) did not stop within the timeout
	// and released its lock after SIGKILL.
	KilledAfterTimeout
	// NotRunning: there was nothing to signal, and no pidfile.
	NotRunning
	// StaleRemoved: there was nothing to signal; a stale pidfile was
	// removed.
	StaleRemoved
	// Lost: the node runs without its lock (see [LostError]); Err says so.
	Lost
	// Failed: the verb failed on the node; Err says why.
	Failed
)

var outcomeNames = [...]string{"none", "started", "restarted", "already running", "signalled",
	"stopped", "killed", "killed after timeout", "not running", "stale removed", "lost", "failed"}

// String names the outcome: "started", "killed after timeout", ...
func (o Outcome) String() string {
	if o >= 0 && int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// stamp sets r.Elapsed once, when r is final.
func (r *Result) stamp() {
	if r.Elapsed == 0 && !r.begun.IsZero() {
		r.Elapsed = max(time.Since(r.begun), 1)
	}
}
