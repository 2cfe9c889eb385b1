package multi

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/launch"
	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/nodes"
)

// A Result is what a verb did to one node: its Outcome and the facts that
// go with it, as fields. It holds no sentence: a program switches on
// Outcome and reads the fields; the CLI writes the words. A Result
// round-trips through JSON, its errors as their text.
type Result struct {
	Node nodes.Node
	// Outcome is what happened.
	Outcome Outcome
	// PID is the node's process that the verb started, signalled or
	// stopped, or that stood in its way (AlreadyRunning, and a failure
	// that knew the process: a lost node, one still stopping, a start it
	// killed). It is 0 when there was none, as for NotRunning.
	//
	// Never pass a Result's PID to kill or os.FindProcess unchecked: to
	// kill(2), pid 0 means the caller's own process group, and the
	// process may have ended, its pid recycled, since the verb returned.
	// Signal a node through its lock (Cluster.Send), which checks the
	// holder afresh.
	PID int
	// Signal is the signal the verb sent first (Signalled, Stopped,
	// Killed, KilledAfterTimeout; Restarted, to stop the old process).
	Signal syscall.Signal
	// KilledAfter, if not 0, is the timeout after which the node, still
	// running, was sent SIGKILL (Outcome KilledAfterTimeout, or Restarted
	// after it).
	KilledAfter time.Duration
	// OldPID, for a node restarted, is the process that was stopped; the
	// facts of the stop (KilledAfter, FilePID) are about it.
	OldPID int
	// FilePID, if not 0, says the pidfile's text named another pid than
	// the lock holder the verb signalled (the holder is the truth, and
	// was used): the pid it named, or -1 when it named no valid pid.
	FilePID int
	// HeldBy, if not 0, is the process that holds the node's lock now,
	// started by someone else while the verb ran: the pidfile was left to
	// it (Stopped, Killed, KilledAfterTimeout, NotRunning).
	HeldBy int
	// TookOver says the node was started once the lock another process
	// held was let go ([RunOptions.WaitForLock]): Outcome Started.
	TookOver bool
	// Lost says the node had lost its pidfile's lock (see [LostError]) and
	// was signalled through its record ([StopOptions.Lost]).
	Lost bool
	// Lingering is how many processes were killed in the node's cgroup:
	// those of a node whose lock was free (its master gone, its children
	// left), or those left after the timeout (KilledAfter).
	Lingering int
	// Exit, if not nil, is how the node's process ended: a start that
	// saw it exit ([ErrExitedAtOnce], [ErrNotReady]), or [Cluster.Run]
	// seeing it end on its own (Failed) or stopped from another shell
	// (Stopped).
	Exit *ExitStatus
	// Ready, for a node with a readiness check that a start or restart
	// started, is what the start saw of it: Ready, Unready (it failed),
	// or Starting (the wait was cut short, the node left running).
	Ready Readiness
	// Containment, for a node a start or restart started, is what holds
	// its tree.
	Containment Containment
	// RecordErr, if not nil, says the node's record could not be written
	// or put back, although the verb did its job.
	RecordErr error
	// TreeErr, if not nil, says what of the node's tree could not be
	// cleaned up (its cgroup folder not removed, processes left in it),
	// although the verb did its job.
	TreeErr error
	// Err is non-nil when the verb failed on this node: a [*NodeError].
	Err error
	// Elapsed is how long the verb took on this node, from the verb's
	// start until this result was final.
	Elapsed time.Duration

	begun time.Time
	lost  nodes.Started // the lost process signalled (StopOptions.Lost), if any
}

// An ExitStatus is how a node's process ended: its exit code, or the
// signal that ended it.
type ExitStatus struct {
	Code   int            // the exit code; -1 when a signal ended it
	Signal syscall.Signal // the signal that ended it, or 0
}

// String formats the result briefly, for logs and tests: "w1: started
// (pid 1234)" or "w1: FAILED: reason". The CLI says more, from the
// fields.
func (r Result) String() string {
	if r.Err != nil {
		var ne *NodeError
		if errors.As(r.Err, &ne) {
			return r.Node.Name + ": FAILED: " + ne.Err.Error()
		}
		return r.Node.Name + ": FAILED: " + r.Err.Error()
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
	Outcome     Outcome     `json:"outcome"`
	PID         int         `json:"pid"`
	Signal      string      `json:"signal,omitempty"`
	KilledAfter string      `json:"killed_after,omitempty"`
	OldPID      int         `json:"old_pid,omitempty"`
	FilePID     int         `json:"file_pid,omitempty"`
	HeldBy      int         `json:"held_by,omitempty"`
	TookOver    bool        `json:"took_over,omitempty"`
	Lost        bool        `json:"lost,omitempty"`
	Lingering   int         `json:"lingering,omitempty"`
	Exit        *ExitStatus `json:"exit,omitempty"`
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
	return json.Marshal(resultJSON{Node: r.Node, Outcome: r.Outcome, PID: r.PID, Signal: signalText(r.Signal),
		KilledAfter: durationText(r.KilledAfter), OldPID: r.OldPID, FilePID: r.FilePID, HeldBy: r.HeldBy,
		TookOver: r.TookOver, Lost: r.Lost, Lingering: r.Lingering, Exit: r.Exit, Ready: r.Ready, Containment: r.Containment,
		RecordErr: errText(r.RecordErr), TreeErr: errText(r.TreeErr), Err: errText(r.Err), Elapsed: r.Elapsed.String()})
}

// UnmarshalJSON decodes what MarshalJSON encodes. The errors come back
// as their text only: errors.Is no longer matches them.
func (r *Result) UnmarshalJSON(b []byte) error {
	var j resultJSON
	if err := json.Unmarshal(b, &j); err != nil {
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
	*r = Result{Node: j.Node, Outcome: j.Outcome, PID: j.PID, Signal: sig, KilledAfter: killedAfter, OldPID: j.OldPID,
		FilePID: j.FilePID, HeldBy: j.HeldBy, TookOver: j.TookOver, Lost: j.Lost, Lingering: j.Lingering, Exit: j.Exit,
		Ready: j.Ready, Containment: j.Containment, RecordErr: textErr(j.RecordErr), TreeErr: textErr(j.TreeErr), Err: textErr(j.Err), Elapsed: elapsed}
	return nil
}

// exitJSON is an ExitStatus on the wire.
type exitJSON struct {
	Code   int    `json:"code"`
	Signal string `json:"signal,omitempty"`
}

// MarshalJSON encodes e with its signal by name.
func (e ExitStatus) MarshalJSON() ([]byte, error) {
	return json.Marshal(exitJSON{Code: e.Code, Signal: signalText(e.Signal)})
}

// UnmarshalJSON decodes what MarshalJSON encodes.
func (e *ExitStatus) UnmarshalJSON(b []byte) error {
	var j exitJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	sig, err := parseSignalText(j.Signal)
	*e = ExitStatus{Code: j.Code, Signal: sig}
	return err
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
	// NoOutcome: the verb has not reached the node.
	NoOutcome Outcome = iota
	// Started: start started the node (PID).
	Started
	// Restarted: restart started again a node it had stopped (PID; the
	// stopped process is OldPID).
	Restarted
	// AlreadyRunning: start found the node running (PID) and left it be:
	// not a failure, as for an init script (Err is nil; a caller that
	// wants it to be one tests Outcome).
	AlreadyRunning
	// Signalled: Stop or Send sent its Signal to the node (PID) and did
	// not wait.
	Signalled
	// Stopped: the node (PID) released its lock after the stop signal.
	Stopped
	// Killed: the node (PID) released its lock after SIGKILL (Kill).
	Killed
	// KilledAfterTimeout: the node (PID) did not stop within the timeout
	// (KilledAfter) and released its lock after SIGKILL.
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

// outcomeNames are the outcomes' words: stable, as programs read them in
// JSON.
var outcomeNames = [...]string{"none", "started", "restarted", "already-running", "signalled",
	"stopped", "killed", "killed-after-timeout", "not-running", "stale-removed", "lost", "failed"}

// String names the outcome in one word: "started",
// "killed-after-timeout", ... (the word MarshalText writes).
func (o Outcome) String() string {
	if o >= 0 && int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// MarshalText writes the outcome's word ([Outcome.String]); an outcome
// that has none is an error.
func (o Outcome) MarshalText() ([]byte, error) {
	if o < 0 || int(o) >= len(outcomeNames) {
		return nil, fmt.Errorf("multi: no word for outcome %d", int(o))
	}
	return []byte(outcomeNames[o]), nil
}

// UnmarshalText reads an outcome's word.
func (o *Outcome) UnmarshalText(b []byte) error {
	for i, name := range outcomeNames {
		if string(b) == name {
			*o = Outcome(i)
			return nil
		}
	}
	return fmt.Errorf("multi: unknown outcome %q", b)
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
	r.Err = &NodeError{Node: r.Node.Name, Op: op, Err: err}
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
