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
// Each node is started in a new session, locks its pidfile (see package
// nodes/pidfile) from its own new process, writes its pid there, points
// stdout and stderr at the logfile, and execs the node's command with the
// pidfile's descriptor left open, so the lock lasts for the node's whole
// life and dies with it. To do that from the node's own process before it
// execs, the current program is re-executed as a small internal step for
// the node (the exec step), on every platform and for every verb. A
// failure before the exec comes back through a close-on-exec pipe, so
// Start returns only once each node runs holding its lock, or has failed
// with a reason. The node starts as it would from a shell: the same
// limits (RLIMIT_NOFILE's soft limit as the caller had it), no signal
// blocked or ignored, no descriptor but its own; its own session, and
// /dev/null and its logfile as its standard descriptors.
//
// # The exec step
//
// The host program, the one that calls [Cluster.Start], [Cluster.Restart]
// or [Cluster.Run], need do nothing for the step: importing this package
// is enough. An init function of a package it imports recognises a
// process started as a node's step (by an environment variable it removes
// again) and plays the step there, never returning to the program's main.
//
// What runs in the step: the Go runtime and the init functions of every
// package the program links in that Go initialises before the step's
// package (internal/launch): its own imports, and others Go's order puts
// first. They run in every node's step too, once per node start: an init
// function should not start goroutines that matter, open listeners,
// print, or take long. Init functions of this package and of the
// program's main package never run in a step.
//
// Which binary: on Linux the step runs /proc/self/exe, the very file the
// host process runs, so that the step works even when the binary has been
// deleted or replaced at its path since the host started (an in-place
// upgrade by rename, as package managers and deploy tools do): nodes
// started by a host still running the old version go through the old
// version's step; a host started after the upgrade uses the new one. The
// step speaks only to its own version, so old and new never mix. Where
// there is no /proc, the host's path ([os.Executable]) is run, and the
// binary must stay at that path while the host starts nodes.
//
// Test binaries work as hosts: a go test binary imports this package like
// any program, and its step runs before TestMain. A program built with
// -race runs the step with the race runtime; GORACE=atexit_sleep_ms=0 in
// the nodes' environment avoids its pause at exit, which only a step that
// fails would pay.
//
// The command is looked up on the PATH as os/exec does it (see
// [Cluster.Env]), and the node gets exactly its environment: the step's
// own variables are removed before it execs.
//
// # A Cluster
//
// The run folder (where node records go, see [Cluster.RunDir]) is a
// property of the Spec the nodes come from: [nodes.Spec.RunDir] places
// the default pidfiles and logfiles, and [Cluster.RunDir] must name the
// same folder, or records and pidfiles go to different folders. Both
// default to [nodes.DefaultRunDir]. [FromSpec] builds a Cluster with both
// set from one Spec.
//
// A Cluster is safe for concurrent use: its verbs may run at once from
// several goroutines (two Starts of one node start it once; the other
// finds it running), provided the Cluster's fields are not changed while
// they run. It holds a lock (for Progress) and must not be copied after
// first use; go vet's copylocks check reports a copy. Use [Cluster.Only]
// for a Cluster on a subset of the nodes, with the same settings.
//
// # Signals
//
// A node is only ever signalled through its lock: the holder's pid comes
// from the kernel (fcntl F_GETLK) just before the signal, is pinned with a
// pidfd on Linux, checked to still hold the lock, and signalled through the
// pidfd. A pidfile nobody has locked is stale and is never signalled, and no
// pid <= 1 and not this process's own pid is ever passed to kill: each pid
// is checked once, where it was read, and kill(2) takes only checked pids.
// When the node's record names a process, the pinned holder must be that
// process (its pidfd inode, or pid and start time): else the node fails
// with a [*pin.HolderError] and nothing is signalled.
//
// # Waiting
//
// [Cluster.StopWait] signals every node and then waits, with package
// waiter, for each node's lock to be released: not for a pid to vanish, so
// zombies and recycled pids do not matter. Then it removes the pidfile,
// after locking it itself and checking it is still the same file.
//
// # In the foreground
//
// [Cluster.Run] starts the nodes as Start does and stays, as a container's
// PID 1 or a systemd Type=notify service: it reaps, forwards signals, stops
// every node on TERM and applies [RunOptions.OnExit] to a node that exits.
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
	// Nodes are the nodes, with their files and commands resolved (see
	// [nodes.Spec.Resolve]).
	Nodes []nodes.Node
	// RunDir is where Start writes node records; "" means
	// [nodes.DefaultRunDir]. It must be the [nodes.Spec.RunDir] the nodes
	// were resolved with (see A Cluster in the package doc, and
	// [FromSpec]).
	RunDir string
	// Progress, if not nil, is called with each node's result as soon as it
	// is known, one call at a time, so that a caller can show progress on
	// a large set. The verbs return all results in order all the same.
	Progress func(Result)
	// LockTimeout bounds how long Start waits for a self-locking node (see
	// [nodes.Node.SelfLock]) to take its lock; 0 means
	// [launch.DefaultLockTimeout]. Such a node that does not is killed.
	LockTimeout time.Duration
	// Detach makes Start let go of each node it starts at once, instead
	// of reaping it when it exits. For a program that exits right after
	// Start, as the multi command does: it then holds no descriptor per
	// node. A long-running caller leaves it false, or collects its dead
	// nodes itself.
	Detach bool
	// Settle is the settle window: Start returns only once every node it
	// started is this old, and fails each one that exited by then, with
	// its exit status and last log lines, so that a command that exits at
	// once is never reported started. The window runs once for the whole
	// batch, not once per node. 0 means [DefaultSettle]; negative means
	// no window (a node is confirmed only once, right after its exec).
	Settle time.Duration
	// Env is the nodes' environment; nil means this process's. Each
	// node's own [nodes.Node.Env] entries (recorded with it) are added
	// over it, and win. A node's command without a slash is looked up
	// as os/exec does: on that environment's PATH if it sets one, else
	// on this process's; never through an empty or "." element (see
	// [exec.ErrDot]). So Env: []string{"FOO=1"} still finds sleep, and
	// the node gets no PATH.
	Env []string
	// AllowSharedFolders accepts a rundir, and folders of the nodes'
	// pidfiles and logfiles, that others than root and this user can
	// write to, for the rest of this process (see [nodes.AcceptShared]):
	// without it every verb refuses them with a [nodes.UnsafeFolderError].
	// Records are then neither written nor read in such a rundir.
	AllowSharedFolders bool

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
