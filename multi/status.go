package multi

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/multi-launcher/multi/nodes"
)

// A Status is what one node is, worked out once by [Cluster.Status]. It
// round-trips through JSON (README's schema), errors as text.
type Status struct {
	Node  nodes.Node
	State State
	// PID is the process the State is about (the lock holder, a lost or
	// exiting process; 0: none), Started when it started. Never hand it
	// to kill unchecked.
	PID     int
	Started time.Time
	FilePID int // the pid the pidfile's text names (0: none)
	// Ready is how ready a running node with a readiness check is
	// (Status runs it; notify and fd:N as its start recorded), ReadyErr
	// why not, ReadyStatus its last STATUS=.
	Ready       Readiness
	ReadyErr    error
	ReadyStatus string
	Fatal       string // why a live multi run gave up on it
	Tree        Tree
	Err         error // why it is StateUnknown, or StateMismatch
}

// A State is what a node is, in one word. Its text is the word.
type State string

// The states, as [Cluster.Status] tells them, first match first
// (README's JSON section says more of each).
const (
	StateUnknown   State = "unknown"   // its pidfile unreadable, or locked not as a node's: Err says
	StateLost      State = "lost"      // no lock held, but its recorded process runs ([LostError])
	StateMismatch  State = "mismatch"  // its pidfile held by another process than its record names: Err says
	StateStopping  State = "stopping"  // its process let go of its lock and is exiting
	StateLingering State = "lingering" // no lock held, but processes of its tree are left
	StateFatal     State = "fatal"     // down, and a live multi run gave up on it
	StateRunning   State = "running"   // its process holds its lock
	StateElsewhere State = "elsewhere" // a process of another pid namespace holds its lock
	StateStale     State = "stale"     // a pidfile nobody holds the lock of: it died without a stop
	StateStopped   State = "stopped"   // no pidfile, or one a stop of multi's left
)

// A Readiness is how ready a running node with a readiness check is.
type Readiness string

// The readinesses.
const (
	Ready    Readiness = "ready"
	Starting Readiness = "starting" // failing its check, younger than the ready timeout
	Unready  Readiness = "unready"
)

// A Containment is what holds a node's process tree.
type Containment string

// The containments.
const (
	InCgroup  Containment = "cgroup"  // a cgroup v2 folder of its own
	InSession Containment = "session" // its lock holder's session: one that leaves it is lost
)

// A Tree is what a node's cgroup, or session, holds; Memory and CPUUsec
// are nil where those controllers are not enabled.
type Tree struct {
	Containment Containment `json:"containment"`
	Cgroup      string      `json:"cgroup,omitempty"`
	Procs       int         `json:"procs"`
	Memory      *int64      `json:"memory_bytes,omitempty"`
	CPUUsec     *int64      `json:"cpu_usec,omitempty"`
	Lingering   bool        `json:"lingering,omitempty"` // no lock held, processes left
	// OOMKills are the processes of the tree the kernel's OOM killer
	// killed (memory.events' oom_kill; nil without the memory
	// controller); LimitHits the times the tree
	// ran into each cgroup limit, by its file: memory.max, memory.high,
	// pids.max, cpu.max (throttled periods). Both count since the
	// node's cgroup was made, at its start; cgroup nodes only.
	OOMKills  *int64           `json:"oom_kills,omitempty"`
	LimitHits map[string]int64 `json:"limit_hits,omitempty"`
}

// Mismatch reports whether a running node's pidfile names another pid.
func (s Status) Mismatch() bool { return s.State == StateRunning && s.FilePID != s.PID }

// String says the status briefly: "w1: running (pid 1234)".
func (s Status) String() string {
	switch {
	case s.Err != nil:
		why := s.Err
		var ne *NodeError
		if errors.As(s.Err, &ne) {
			why = ne.Err
		}
		return s.Node.Name + ": " + string(cmp.Or(s.State, StateUnknown)) + ": " + why.Error()
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

// MarshalJSON encodes s as README's JSON schema says.
func (s Status) MarshalJSON() ([]byte, error) {
	return json.Marshal(statusJSON{Node: s.Node, State: s.State, PID: s.PID, Started: s.Started, FilePID: s.FilePID,
		Ready: s.Ready, ReadyErr: errText(s.ReadyErr), ReadyStatus: s.ReadyStatus, Fatal: s.Fatal, Tree: s.Tree, Err: errText(s.Err)})
}

// UnmarshalJSON decodes what MarshalJSON encodes, errors as text.
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
