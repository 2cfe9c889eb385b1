package multi

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/multi-launcher/multi/nodes"
)

// A Status is one node's state, from its pidfile's lock, its record and
// its tree, worked out once by [Cluster.Status]. A program switches on
// State; the CLI's words, its exit codes and its JSON all read it.
type Status struct {
	Node nodes.Node
	// State is what the node is, in one word.
	State State
	// PID is the process the State is about: the lock holder (running,
	// elsewhere), the process that runs without its lock (lost), the one
	// exiting (stopping); 0 otherwise. As for [Result.PID], never pass it
	// to kill unchecked.
	PID int
	// Started is when PID started, where the system says; zero otherwise.
	Started time.Time
	// FilePID is the pid the pidfile's text names, 0 when it names none
	// or there is no pidfile. The lock holder is the truth: a running
	// node whose FilePID is not its PID has a pidfile that disagrees
	// ([Status.Mismatch]); a stale pidfile names a process long gone.
	FilePID int
	// Ready is the readiness of a running node with a check
	// ([nodes.Node.Ready]), which Status runs (at most 500 ms each, all
	// at once); "" for a node without a check or not running. Checks that
	// only a start can see pass (notify, fd:N) count a running node ready
	// when the start of this very process (its pid and start time, as
	// recorded) saw it pass; log reads again the lines it logged since.
	Ready Readiness
	// ReadyErr says why a node is not Ready.
	ReadyErr error
	// ReadyStatus is the node's last STATUS= text (--ready=notify), as
	// the start of this process recorded it.
	ReadyStatus string
	// Fatal, if not "", says why a multi run that is still alive gave up
	// on the node (its crash-loop limit, RunOptions.MaxRestarts): the
	// node is down (State StateFatal) and stays so.
	Fatal string
	// Tree is what the node's containment holds: its cgroup's processes,
	// or its session's.
	Tree Tree
	// Err is set when the node's state cannot be told (State
	// StateUnknown): its pidfile could not be inspected, or is locked by
	// something that is not a node (Err then matches
	// [pidfile.ErrForeignLock]).
	Err error
}

// A State is what a node is, in one word. Its text is the word.
type State string

// The states, as [Cluster.Status] tells them, first match first.
const (
	// StateUnknown: the pidfile could not be inspected, or is locked,
	// but not as a node locks it ([Status.Err] says why).
	StateUnknown State = "unknown"
	// StateLost: nothing holds the node's lock, yet the process its
	// record names, same pid and start time, still runs (see [LostError]).
	StateLost State = "lost"
	// StateStopping: the node's process let go of its lock and is
	// exiting.
	StateStopping State = "stopping"
	// StateLingering: nobody holds the node's lock, yet processes of its
	// tree are left in its cgroup or session.
	StateLingering State = "lingering"
	// StateFatal: down, and a live multi run gave up on it ([Status.Fatal]).
	StateFatal State = "fatal"
	// StateRunning: the node's process holds its lock.
	StateRunning State = "running"
	// StateElsewhere: a process of another pid namespace holds the lock.
	StateElsewhere State = "elsewhere"
	// StateStale: a pidfile is left that no process holds the lock of:
	// the node died without a stop.
	StateStale State = "stale"
	// StateStopped: no pidfile, or one a stop of multi's left.
	StateStopped State = "stopped"
)

// Up reports whether the node runs, here or in another pid namespace.
func (s State) Up() bool { return s == StateRunning || s == StateElsewhere }

// A Readiness is how ready a running node with a readiness check is.
type Readiness string

// The readinesses ([Status.Ready]).
const (
	Ready    Readiness = "ready"
	Starting Readiness = "starting" // failing its check, younger than the ready timeout
	Unready  Readiness = "unready"
)

// A Containment is what holds a node's process tree.
type Containment string

// The containments.
const (
	// InCgroup: a cgroup v2 folder of the node's own holds its whole
	// tree, whatever its processes do.
	InCgroup Containment = "cgroup"
	// InSession: the tree is the lock holder and the members of its
	// session; a process that leaves the session is not found.
	InSession Containment = "session"
)

// A Tree is what a node's containment holds. Procs counts the processes
// in the cgroup, or in the session (none under KillMode process); Memory
// (memory.current, bytes) and CPUUsec (cpu.stat's usage_usec) are nil
// where those controllers are not enabled: absent, not zero.
type Tree struct {
	Containment Containment `json:"containment"`
	Cgroup      string      `json:"cgroup,omitempty"`
	Procs       int         `json:"procs"`
	Memory      *int64      `json:"memory_bytes,omitempty"`
	CPUUsec     *int64      `json:"cpu_usec,omitempty"`
	// Lingering: nobody holds the node's lock, yet processes are left in
	// its cgroup or session.
	Lingering bool `json:"lingering,omitempty"`
}

// Mismatch reports whether the node runs with a pidfile whose text
// names another pid than its lock holder.
func (s Status) Mismatch() bool { return s.State == StateRunning && s.FilePID != s.PID }

// String formats the status briefly, for logs and tests: "w1: running
// (pid 1234)", "w1: stopped", "w1: lost (pid 1234)", "w1: unknown:
// reason".
func (s Status) String() string {
	switch {
	case s.Err != nil:
		var ne *NodeError
		if errors.As(s.Err, &ne) {
			return s.Node.Name + ": unknown: " + ne.Err.Error()
		}
		return s.Node.Name + ": unknown: " + s.Err.Error()
	case s.State == StateLingering:
		return fmt.Sprintf("%s: lingering (%s)", s.Node.Name, countProcs(s.Tree.Procs, "", ""))
	case s.State == StateFatal:
		return s.Node.Name + ": fatal: " + s.Fatal
	case s.PID > 0:
		return fmt.Sprintf("%s: %s (pid %d)", s.Node.Name, s.State, s.PID)
	}
	return s.Node.Name + ": " + string(s.State)
}

// statusJSON is a Status on the wire: its errors as text.
type statusJSON struct {
	Node        nodes.Node `json:"node"`
	State       State      `json:"state"`
	PID         int        `json:"pid"`
	Started     time.Time  `json:"started,omitzero"`
	FilePID     int        `json:"file_pid"`
	Ready       Readiness  `json:"ready,omitempty"`
	ReadyErr    string     `json:"ready_error,omitempty"`
	ReadyStatus string     `json:"ready_status,omitempty"`
	Fatal       string     `json:"fatal,omitempty"`
	Tree        Tree       `json:"tree"`
	Err         string     `json:"error,omitempty"`
}

// MarshalJSON encodes s as README's JSON schema says: snake_case names,
// the state a word, errors as their text.
func (s Status) MarshalJSON() ([]byte, error) {
	return json.Marshal(statusJSON{Node: s.Node, State: s.State, PID: s.PID, Started: s.Started, FilePID: s.FilePID,
		Ready: s.Ready, ReadyErr: errText(s.ReadyErr), ReadyStatus: s.ReadyStatus, Fatal: s.Fatal, Tree: s.Tree, Err: errText(s.Err)})
}

// UnmarshalJSON decodes what MarshalJSON encodes. The errors come back
// as their text only: errors.Is no longer matches them.
func (s *Status) UnmarshalJSON(b []byte) error {
	var j statusJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = Status{Node: j.Node, State: j.State, PID: j.PID, Started: j.Started, FilePID: j.FilePID, Ready: j.Ready,
		ReadyErr: textErr(j.ReadyErr), ReadyStatus: j.ReadyStatus, Fatal: j.Fatal, Tree: j.Tree, Err: textErr(j.Err)}
	return nil
}

// errText is err's text, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// textErr is an error of text, nil for "".
func textErr(s string) error {
	if s == "" {
		return nil
	}
	return errors.New(s)
}
