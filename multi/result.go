package multi

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/fdwait"
	"github.com/multi-launcher/multi/internal/launch"
	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/nodes"
)

// A Result is what a verb did to one node: its Outcome, and the facts as
// fields. It round-trips through JSON (README's schema), errors as text.
type Result struct {
	Node    nodes.Node
	Outcome Outcome
	// PID is the process the verb started, signalled or stopped, or that
	// stood in its way (0: none). Never hand it to kill unchecked: it may
	// be another's by now ([Cluster.Send] signals through the lock).
	PID                int
	Signal             syscall.Signal // the signal sent first
	KilledAfter        time.Duration  // the timeout after which it got SIGKILL
	OldPID             int            // the process a restart stopped
	FilePID            int            // the pid the pidfile's text named instead (-1: none valid)
	HeldBy             int            // a process that took its lock meanwhile, and its pidfile
	TookOver           bool           // started at another holder's death ([RunOptions.WaitForLock])
	Lost               bool           // lost, and signalled through its record ([StopOptions.Lost])
	Lingering          int            // processes of its tree killed beside it
	Exit               *ExitStatus    // how its process ended, where the verb saw it
	Ready              Readiness      // what a start saw of its readiness check
	Containment        Containment    // what holds the tree of a node started
	RecordErr, TreeErr error          // what of its record, or tree, was left undone
	Err                error          // a [*NodeError] when the verb failed on it
	Elapsed            time.Duration  // how long the verb took on it

	begun time.Time
	lost  nodes.Started // the lost process signalled (StopOptions.Lost), if any
	// runOnce: a start runs the node to its end (a need's done names it).
	runOnce bool
	// unmet: a need of the node's After is not met; a start that would
	// start it fails with this instead (one running is left be).
	unmet error
}

// An ExitStatus is how a process ended: its exit code, or signal (code -1).
type ExitStatus struct {
	Code   int
	Signal syscall.Signal
}

// String says the result briefly: "w1: started (pid 1234)".
func (r Result) String() string {
	if r.Err != nil {
		var ne *NodeError
		if errors.As(r.Err, &ne) {
			return r.Node.Name + ": FAILED: " + ne.Err.Error()
		}
		return r.Node.Name + ": FAILED: " + r.Err.Error()
	}
	if r.Outcome == Started && r.Exit != nil { // run to its end
		s := r.Node.Name + ": started"
		if r.PID > 0 {
			s += fmt.Sprintf(" (pid %d)", r.PID)
		}
		return fmt.Sprintf("%s, exited %d", s, r.Exit.Code)
	}
	if r.PID > 0 {
		return fmt.Sprintf("%s: %s (pid %d)", r.Node.Name, r.Outcome, r.PID)
	}
	return r.Node.Name + ": " + r.Outcome.String()
}

// resultJSON is a Result on the wire, as README's JSON schema says:
// snake_case names, signals by name, durations as time.ParseDuration
// reads them, errors as their text.
type resultJSON struct {
	Node        nodes.Node  `json:"node"`
	Outcome     string      `json:"outcome"`
	PID         int         `json:"pid"`
	Signal      string      `json:"signal,omitempty"`
	KilledAfter string      `json:"killed_after,omitempty"`
	OldPID      int         `json:"old_pid,omitempty"`
	FilePID     int         `json:"file_pid,omitempty"`
	HeldBy      int         `json:"held_by,omitempty"`
	TookOver    bool        `json:"took_over,omitempty"`
	Lost        bool        `json:"lost,omitempty"`
	Lingering   int         `json:"lingering,omitempty"`
	Exit        *exitJSON   `json:"exit,omitempty"`
	Ready       Readiness   `json:"ready,omitempty"`
	Containment Containment `json:"containment,omitempty"`
	RecordErr   string      `json:"record_error,omitempty"`
	TreeErr     string      `json:"tree_error,omitempty"`
	Err         string      `json:"error,omitempty"`
	Elapsed     string      `json:"elapsed"`
}

// MarshalJSON encodes r as README's JSON schema says.
func (r Result) MarshalJSON() ([]byte, error) {
	if r.Outcome < 0 || int(r.Outcome) >= len(outcomeNames) {
		return nil, fmt.Errorf("multi: no word for outcome %d", int(r.Outcome))
	}
	return json.Marshal(resultJSON{Node: r.Node, Outcome: outcomeNames[r.Outcome], PID: r.PID, Signal: signalText(r.Signal),
		KilledAfter: durationText(r.KilledAfter), OldPID: r.OldPID, FilePID: r.FilePID, HeldBy: r.HeldBy,
		TookOver: r.TookOver, Lost: r.Lost, Lingering: r.Lingering, Exit: exitOut(r.Exit), Ready: r.Ready, Containment: r.Containment,
		RecordErr: errText(r.RecordErr), TreeErr: errText(r.TreeErr), Err: errText(r.Err), Elapsed: r.Elapsed.String()})
}

// UnmarshalJSON decodes what MarshalJSON encodes, errors as text.
func (r *Result) UnmarshalJSON(b []byte) error {
	var j resultJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	outcome, err := parseOutcome(j.Outcome)
	if err != nil {
		return err
	}
	sig, err := parseSignalText(j.Signal)
	if err != nil {
		return err
	}
	killedAfter, err := parseDurationText(j.KilledAfter)
	if err != nil {
		return err
	}
	elapsed, err := parseDurationText(j.Elapsed)
	if err != nil {
		return err
	}
	exit, err := j.Exit.in()
	if err != nil {
		return err
	}
	*r = Result{Node: j.Node, Outcome: outcome, PID: j.PID, Signal: sig, KilledAfter: killedAfter, OldPID: j.OldPID,
		FilePID: j.FilePID, HeldBy: j.HeldBy, TookOver: j.TookOver, Lost: j.Lost, Lingering: j.Lingering, Exit: exit,
		Ready: j.Ready, Containment: j.Containment, RecordErr: textErr(j.RecordErr), TreeErr: textErr(j.TreeErr), Err: textErr(j.Err), Elapsed: elapsed}
	return nil
}

// exitJSON is an ExitStatus on the wire, its signal by name.
type exitJSON struct {
	Code   int    `json:"code"`
	Signal string `json:"signal,omitempty"`
}

// exitOut is e on the wire; nil for nil.
func exitOut(e *ExitStatus) *exitJSON {
	if e == nil {
		return nil
	}
	return &exitJSON{Code: e.Code, Signal: signalText(e.Signal)}
}

// in reads j back; nil for nil.
func (j *exitJSON) in() (*ExitStatus, error) {
	if j == nil {
		return nil, nil
	}
	sig, err := parseSignalText(j.Signal)
	return &ExitStatus{Code: j.Code, Signal: sig}, err
}

// signalText is sig by name ("SIGTERM"), or its number for one that has
// none; "" for 0.
func signalText(sig syscall.Signal) string {
	if sig == 0 {
		return ""
	}
	name := pin.SignalName(sig)
	if name[0] >= '0' && name[0] <= '9' {
		return name
	}
	return "SIG" + name
}

// parseSignalText reads what signalText writes.
func parseSignalText(s string) (syscall.Signal, error) {
	if s == "" {
		return 0, nil
	}
	return pin.ParseSignal(s)
}

// durationText is d as time.ParseDuration reads it; "" for 0.
func durationText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// parseDurationText reads what durationText writes.
func parseDurationText(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	return time.ParseDuration(s)
}

// An Outcome is what a verb did to one node ([Result.Outcome]).
type Outcome int

// The outcomes. Lost and Failed come with [Result.Err] set; the others
// without.
const (
	NoOutcome          Outcome = iota // the verb did not reach the node
	Started                           // start started it
	Restarted                         // restart stopped it (OldPID) and started it again
	AlreadyRunning                    // start found it running, and left it be (as an init script does)
	Signalled                         // stop or send signalled it, not waiting
	Stopped                           // it released its lock after the stop signal
	Killed                            // it released its lock after SIGKILL
	KilledAfterTimeout                // it did not stop within the timeout, and got SIGKILL
	NotRunning                        // nothing to signal, no pidfile
	StaleRemoved                      // nothing to signal; a stale pidfile removed
	Lost                              // it runs without its lock ([LostError])
	Failed                            // Err says why
)

// outcomeNames are the outcomes' words: stable, as programs read them in
// JSON.
var outcomeNames = [...]string{"none", "started", "restarted", "already-running", "signalled",
	"stopped", "killed", "killed-after-timeout", "not-running", "stale-removed", "lost", "failed"}

// String is the outcome's word: "started", "killed-after-timeout".
func (o Outcome) String() string {
	if o >= 0 && int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// parseOutcome reads an outcome's word.
func parseOutcome(s string) (Outcome, error) {
	for i, name := range outcomeNames {
		if s == name {
			return Outcome(i), nil
		}
	}
	return 0, fmt.Errorf("multi: unknown outcome %q", s)
}

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
func (r *Result) recordErr(err error) { r.RecordErr = addErr(r.RecordErr, err) }

// treeErr adds err, about the node's tree, to r's.
func (r *Result) treeErr(err error) { r.TreeErr = addErr(r.TreeErr, err) }

// addErr is err after was, if any.
func addErr(was, err error) error {
	if was != nil {
		return fmt.Errorf("%w; %w", was, err)
	}
	return err
}

// fail makes r a failure of op on its node (Lost for a lost node),
// with how its process ended where err says.
func (r *Result) fail(op string, err error) {
	r.Err = &NodeError{Node: r.Node.Name, Op: op, Err: fdwait.Explain(err)}
	r.Outcome = Failed
	if errors.Is(err, ErrLost) {
		r.Outcome = Lost
	}
	var ee *launch.ExitError
	if errors.As(err, &ee) {
		r.Exit = exitStatus(ee.Status)
	}
}

// alreadyRunning makes r a start that found its node running, pid.
func (r *Result) alreadyRunning(pid int) {
	r.Outcome, r.PID, r.Err = AlreadyRunning, pid, nil
}

// stamp sets r.Elapsed once, when r is final.
func (r *Result) stamp() {
	if r.Elapsed == 0 && !r.begun.IsZero() {
		r.Elapsed = max(time.Since(r.begun), 1)
	}
}
