// Package multi starts a set of named nodes (detached processes) and stops
// them again without ever signalling the wrong process:
//
//	ns, err := nodes.Spec{
//		Names:   []string{"w1", "w2", "w3"},
//		RunDir:  "/run/myapp",              // pidfiles, logfiles and records
//		Command: []string{"worker", "%n"}, // %n: the node's name
//	}.Nodes()
//	if err != nil {
//		return err
//	}
//	c := &multi.Cluster{Nodes: ns, RunDir: "/run/myapp"}
//	res, err := c.Start(ctx) // each node runs holding its pidfile's lock
//	...
//	res, err = c.StopWait(ctx, multi.StopOptions{Timeout: 10 * time.Second})
//	// signalled through the lock, waited for until released, killed after 10 s
//
// Each [Result] says what happened to one node ([Result.Outcome]); the
// error joins the per-node errors. [FromSpec] builds the Cluster from the
// Spec in one step. [Cluster.Status] reads the nodes' states,
// [Cluster.Restart] and [Cluster.Only] work on all or some of them, and
// [Cluster.Run] stays in the foreground as a supervisor.
//
// Package nodes owns the names and the records, package nodes/pidfile the
// pidfile and its lock, package waiter waiting for a lock to be released.
// docs/architecture.md maps the files of this package and of the internal
// packages it stands on.
//
// # How a node runs
//
// Each node's own process, in a new session, locks its pidfile (see
// package nodes/pidfile), writes its pid there, points stdout and stderr
// at the logfile and execs the node's command with the locked descriptor
// left open: the lock lasts the node's whole life and dies with it. That
// process is the current program re-executed as a small step for the
// node (the exec step); a failure before the exec comes back through a
// close-on-exec pipe, so Start returns once each node runs holding its
// lock, or has failed with a reason. The node starts as from a shell:
// the caller's limits, no signal blocked or ignored, no descriptor but
// its own; the command is looked up on the PATH as os/exec does it (see
// [Cluster.Env]).
//
// The host program need do nothing for the step: importing this package
// is enough. A process started as a node's step is recognised by an init
// function of the package that plays it and never returns to main; the
// init functions Go runs before that one (not this package's, nor main's)
// run in every step, so they should not start goroutines, listen, print
// or take long. On Linux the step runs /proc/self/exe, the very binary
// the host runs, even once it was replaced at its path; elsewhere
// [os.Executable], which must then stay. A go test binary works as a host.
//
// # Signals and waiting
//
// A node is only ever signalled through its lock: the holder's pid comes
// from the kernel (fcntl F_GETLK) just before the signal, is pinned with
// a pidfd on Linux, checked to still hold the lock and to be the process
// the node's record names ([ErrHolderMismatch] otherwise), and signalled
// through the pidfd. A stale pidfile is never signalled; no pid <= 1 nor
// this process's own is ever passed to kill. [Cluster.StopWait] then waits,
// with package waiter, for each lock to be released, not for a pid to
// vanish (zombies and recycled pids do not matter), and removes the
// pidfile once it has locked it itself and seen it is still the same file.
//
// # A Cluster
//
// [Cluster.RunDir] (the records' folder) must be the [nodes.Spec.RunDir]
// the nodes were resolved with; [FromSpec] sets both from one Spec. A
// Cluster's verbs may run at once from several goroutines (two Starts of
// one node start it once), provided its fields do not change meanwhile;
// it must not be copied after first use (go vet's copylocks check says so).
package multi

import (
	"sync"
	"time"

	"github.com/multi-launcher/multi/nodes"
)

// A Cluster is a set of nodes and how to start them; how to stop them is
// given per call ([StopOptions]). Nodes must be set; every other zero
// field has a documented default. Safe for
// concurrent use; not to be copied (see A Cluster in the package doc).
type Cluster struct {
	// Nodes are the nodes: from [nodes.Spec.Nodes], or
	// [nodes.Spec.Resolve] to fill in what their records say. A node
	// that names no cgroup and no recorded process is stopped, signalled
	// and looked at with the tree its record names (where its start put
	// it), as if resolved.
	Nodes []nodes.Node
	// RunDir is where the node records go; "" means
	// [nodes.DefaultRunDir]. It must be the [nodes.Spec.RunDir] the nodes
	// were resolved with.
	RunDir string
	// Progress, if not nil, gets each node's result as soon as it is
	// final, one call at a time; the verbs return them all in order too.
	Progress func(Result)
	// LockTimeout bounds how long Start waits for a self-locking node
	// ([nodes.Node.SelfLock]) to take its lock, or kills it; 0 means 10 s.
	LockTimeout time.Duration
	// Detach makes Start let go of each node at once instead of reaping
	// it when it exits: for a program that exits right after Start.
	Detach bool
	// Settle is the settle window: Start returns once every node it
	// started is this old, and fails each that exited by then, with its
	// exit status and last log lines. It runs once per batch. 0 means
	// [DefaultSettle]; negative means none.
	Settle time.Duration
	// ReadyTimeout bounds how long Start and Restart wait for a node with
	// a readiness check ([nodes.Node.Ready]) to pass it; such a node has
	// no settle window: Start returns for it the moment it is ready, fails
	// it at once if it exits, and stops it (TERM, KILL after 10 s) and
	// fails it ([ErrNotReady]) if not ready in time. 0 means 60 s.
	ReadyTimeout time.Duration
	// Env is the nodes' environment; nil means this process's. Each
	// node's own [nodes.Node.Env] entries are added over it. A command
	// without a slash is looked up as os/exec does, on Env's PATH if it
	// has one, else on this process's; never through an empty or "."
	// element ([exec.ErrDot]).
	Env []string
	// AllowSharedFolders accepts, for the rest of this process, a rundir
	// and pidfile and logfile folders that others than root and this
	// user can write to (see [nodes.AcceptShared]); records are then
	// neither written nor read there. Without it they are refused
	// ([nodes.UnsafeFolderError]).
	AllowSharedFolders bool
	// Clean makes a start kill what is left in a node's cgroup from its
	// last run (a lingering node) instead of refusing to start it.
	Clean bool

	// progressMu makes Progress one call at a time across the verbs.
	progressMu sync.Mutex
}

// FromSpec resolves s's nodes (see [nodes.Spec.Nodes]) and returns a
// Cluster on them with RunDir set to s.RunDir, so that records, pidfiles
// and logfiles share one run folder. Other fields are left zero.
func FromSpec(s nodes.Spec) (*Cluster, error) {
	ns, err := s.Nodes()
	if err != nil {
		return nil, err
	}
	return &Cluster{Nodes: ns, RunDir: s.RunDir}, nil
}
