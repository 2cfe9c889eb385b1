package multi

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// A Status is one node's state, from its pidfile's lock.
type Status struct {
	Node nodes.Node
	pidfile.Info
	// Lost, if not nil, says the node is lost: nothing holds its lock
	// (State is Absent or Stale) but the process its record names, with
	// the same start time, still runs.
	Lost *LostError
	// Stopping, if not 0, is the pid of the node's process that has let
	// go of its lock and is exiting (State is Absent or Stale): the node
	// is on its way out, not lost.
	Stopping int
	// Ready is the readiness of a running node with a check
	// ([nodes.Node.Ready]), which Status runs (at most 500 ms each, all
	// at once): "ready", "starting" (failing, but younger than
	// [Cluster.ReadyTimeout]) or "unready", with ReadyErr saying why; ""
	// for a node without a check or not running. Checks that only a
	// start can see pass (notify, fd:N) count a running node ready when
	// the start of this very process (its pid and start time, as
	// recorded) saw it pass; log reads again the lines it logged since.
	Ready    string
	ReadyErr error
	// ReadyStatus is the node's last STATUS= text (--ready=notify), as
	// the start of this process recorded it.
	ReadyStatus string
	// Fatal, if not "", says why a multi run that is still alive gave up
	// on the node (its crash-loop limit, RunOptions.MaxRestarts): the
	// node is down (State Absent or Stale) and stays so.
	Fatal string
	// Tree is what the node's containment holds: its cgroup's processes.
	Tree Tree
	// Err is set when the pidfile could not be inspected, or is locked by
	// something that is not a node (State [pidfile.Foreign]; Err then
	// matches [pidfile.ErrForeignLock]).
	Err error
}

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
	case s.Lost != nil:
		return fmt.Sprintf("%s: lost (pid %d)", s.Node.Name, s.Lost.PID)
	case s.Stopping != 0:
		return fmt.Sprintf("%s: stopping (pid %d)", s.Node.Name, s.Stopping)
	case s.Tree.Lingering:
		return fmt.Sprintf("%s: lingering (%d processes)", s.Node.Name, s.Tree.Procs)
	case s.Fatal != "":
		return s.Node.Name + ": fatal: " + s.Fatal
	case s.PID > 0:
		return fmt.Sprintf("%s: %s (pid %d)", s.Node.Name, s.State, s.PID)
	}
	return s.Node.Name + ": " + s.State.String()
}

// statusJSON is a Status on the wire: its errors as text.
type statusJSON struct {
	Node     nodes.Node
	Path     string
	State    pidfile.State
	PID      int
	LockErr  string `json:",omitempty"`
	FilePID  int
	FileErr  string     `json:",omitempty"`
	Lost     *LostError `json:",omitempty"`
	Stopping int        `json:",omitempty"`
	Err      string     `json:",omitempty"`
	Ready    string     `json:",omitempty"`
	ReadyErr string     `json:",omitempty"`
	Tree     Tree
	// ReadyStatus: the node's last STATUS= text.
	ReadyStatus string `json:",omitempty"`
	Fatal       string `json:",omitempty"`
}

// MarshalJSON encodes s with its state as a word and its errors as their
// text.
func (s Status) MarshalJSON() ([]byte, error) {
	return json.Marshal(statusJSON{Node: s.Node, Path: s.Path, State: s.State, PID: s.PID,
		LockErr: errText(s.LockErr), FilePID: s.FilePID, FileErr: errText(s.FileErr),
		Lost: s.Lost, Stopping: s.Stopping, Tree: s.Tree, Err: errText(s.Err), Ready: s.Ready, ReadyErr: errText(s.ReadyErr), ReadyStatus: s.ReadyStatus, Fatal: s.Fatal})
}

// UnmarshalJSON decodes what MarshalJSON encodes. The errors come back
// as their text only: errors.Is no longer matches them.
func (s *Status) UnmarshalJSON(b []byte) error {
	var j statusJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = Status{Node: j.Node, Info: pidfile.Info{Path: j.Path, State: j.State, PID: j.PID,
		LockErr: textErr(j.LockErr), FilePID: j.FilePID, FileErr: textErr(j.FileErr)},
		Lost: j.Lost, Stopping: j.Stopping, Tree: j.Tree, Err: textErr(j.Err), Ready: j.Ready, ReadyErr: textErr(j.ReadyErr), ReadyStatus: j.ReadyStatus, Fatal: j.Fatal}
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

// A Tree is what a node's containment holds. Containment is "cgroup"
// where the node's processes are in a cgroup v2 folder of its own
// (Cgroup), else "session" (its lock holder and the members of its
// session). Procs counts the processes in the cgroup, or in the session
// (none under KillMode process); Memory (memory.current, bytes) and
// CPUUsec (cpu.stat's usage_usec) are nil where those controllers are not
// enabled: absent, not zero. Lingering: nobody holds the node's lock, yet
// processes are left in its cgroup or session.
type Tree struct {
	Containment string
	Cgroup      string `json:",omitempty"`
	Procs       int
	Memory      *int64 `json:",omitempty"`
	CPUUsec     *int64 `json:",omitempty"`
	Lingering   bool   `json:",omitempty"`
}
