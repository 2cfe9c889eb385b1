// Package multi starts a set of named nodes (detached processes) and stops
// them again without ever signalling the wrong process.
//
// # How a node runs
//
// Go cannot run code between fork and exec, so [Cluster.Start] re-executes
// the current program as a small internal step for each node. That step, in
// the node's own new process, starts a new session, locks the node's
// pidfile (see package nodes), writes its pid there, points stdout and
// stderr at the logfile, and execs the node's command with the pidfile's
// descriptor left open, so the lock lasts for the node's whole life and
// dies with it. An exec failure comes back through a close-on-exec pipe, so
// Start returns only once each node runs holding its lock, or has failed
// with a reason. Any program that imports this package can play that step:
// the package's init function does it when the program is started as one.
//
// # Signals
//
// A node is only ever signalled through its lock: the holder's pid comes
// from the kernel (fcntl F_GETLK) just before the signal, is pinned with a
// pidfd on Linux, checked to still hold the lock, and signalled through the
// pidfd. A pidfile nobody has locked is stale and is never signalled, and no
// pid <= 1 and not this process's own pid is ever passed to kill.
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
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
	"github.com/multi-launcher/multi/waiter"
)

// Errors that callers test with [errors.Is] on a [*NodeError] or on the
// joined error a verb returns.
var (
	// ErrAlreadyRunning: start found the node's pidfile locked by a live
	// process.
	ErrAlreadyRunning = pidfile.ErrAlreadyRunning
	// ErrNotRunning: nothing holds the node's lock, so there is nothing to
	// signal.
	ErrNotRunning = errors.New("not running")
	// ErrElsewhere: the lock is held by a process that cannot be named from
	// here (another pid namespace); it is not signalled.
	ErrElsewhere = errors.New("running in another pid namespace (not signalled)")
	// ErrNoCommand: start has no command for the node.
	ErrNoCommand = errors.New("no command (give one after --)")
	// ErrUnsafePID: the kernel named a pid that must never be signalled
	// (<= 1, or this process).
	ErrUnsafePID = errors.New("refusing to signal pid")
	// ErrExitedAtOnce: the node's command exited before start could see it
	// holding its lock.
	ErrExitedAtOnce = errors.New("exited at once")
	// ErrNoLock: a self-locking node did not take its lock in time.
	ErrNoLock = errors.New("did not lock its pidfile")
	// ErrForeignLock: the node's pidfile is locked, but not as a node
	// locks it (a read lock, an OFD lock, a lock on part of the file); the
	// locker is named, and never signalled. See [pidfile.ForeignError].
	ErrForeignLock = pidfile.ErrForeignLock
	// ErrStopSignal: StopWait or Restart was asked to send a signal that
	// stops a process without ending it, so the wait could never end.
	ErrStopSignal = errors.New("a stop signal never ends a node; the wait would never end")
	// ErrLost: the node's lock is gone but the process its record names
	// (same pid, same start time) still runs; see [LostError].
	ErrLost = errors.New("lost")
)

// IsStopSignal reports whether sig stops a process rather than asking it
// to end: SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU.
func IsStopSignal(sig syscall.Signal) bool { return isStopSignal(sig) }

// A LostError reports a lost node: nothing holds its pidfile's lock (the
// node closed the descriptor, or its pidfile was deleted), yet the process
// its record names, with the same pid and start time, still runs. It
// cannot be found through its lock, so it is neither counted stopped nor
// started a second time; it is signalled only with [Cluster.SignalLost].
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

// A Cluster is a set of nodes and how to run and stop them. Nodes must be
// set; every other zero field has a documented default.
type Cluster struct {
	// Nodes are the nodes, with their files and commands resolved (see
	// [nodes.Spec.Resolve]).
	Nodes []nodes.Node
	// RunDir is where Start writes node records; "" means
	// [nodes.DefaultRunDir].
	RunDir string
	// Progress, if not nil, is called with each node's result as soon as it
	// is known, one call at a time, so that a caller can show progress on
	// a large set. The verbs return all results in order all the same.
	Progress func(Result)
	// Signalled, if not nil, is called by StopWait, Kill and Restart with
	// each node they signalled and are about to wait for (Result.PID is
	// the process), before the wait, from one goroutine; a caller can so
	// show what is being waited for. It may run while Progress does.
	Signalled func(Result)
	// LockTimeout bounds how long Start waits for a self-locking node (see
	// [nodes.Node.SelfLock]) to take its lock; 0 means
	// [DefaultLockTimeout]. Such a node that does not is killed.
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
	// SignalLost makes Stop, StopWait, Kill and Restart signal a lost node
	// (see [LostError]) too, through a pidfd, once its start time is seen
	// to match its record; without it a lost node fails and is left alone.
	SignalLost bool

	progressMu sync.Mutex
	// Env is the nodes' environment; nil means this process's.
	Env []string
	// Signal is what Stop, StopWait and Restart send; 0 means SIGTERM.
	Signal syscall.Signal
	// Timeout, if positive, bounds how long StopWait and Restart wait after
	// Signal before they send SIGKILL. Zero means wait until ctx is done.
	Timeout time.Duration
	// Wait is how StopWait, Kill and Restart wait for locks to be
	// released; nil means [waiter.Default] (polling).
	Wait waiter.Strategy
	// Group, if set, makes Stop, StopWait, Kill and Restart (and the
	// SIGKILL after Timeout) signal each node's whole process group, as
	// supervisord's stopasgroup and killasgroup do, so that children the
	// node forked get the signal too. The group is signalled only once the
	// lock holder is pinned, seen to still hold the lock, and confirmed to
	// lead its own process group (a node does: it starts a new session);
	// otherwise the node fails and nothing is signalled. Never a group
	// <= 1 or multi's own. Only the holder is waited for: children that
	// outlive it are not. Without Group only the holder is signalled.
	Group bool
}

// A Result is what a verb did to one node.
type Result struct {
	Node nodes.Node
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
func joinErrs(results []Result) error {
	var errs []error
	for _, r := range results {
		if r.Err != nil {
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
}

func (c *Cluster) signal() syscall.Signal {
	if c.Signal == 0 {
		return syscall.SIGTERM
	}
	return c.Signal
}

func (c *Cluster) rundir() string {
	if c.RunDir == "" {
		return nodes.DefaultRunDir()
	}
	return c.RunDir
}

func (c *Cluster) env() []string {
	if c.Env == nil {
		return os.Environ()
	}
	return c.Env
}

// SignalName returns the signal's name without "SIG": "TERM", "KILL".
func SignalName(sig syscall.Signal) string {
	if name := signalName(sig); name != "" {
		return strings.TrimPrefix(name, "SIG")
	}
	return fmt.Sprint(int(sig))
}

// ParseSignal parses a signal the way celery multi users write it after
// the dash: "KILL", "SIGKILL", "kill", "9". Signal 0 and unknown names are
// errors.
func ParseSignal(s string) (syscall.Signal, error) {
	if s == "" {
		return 0, errors.New("empty signal")
	}
	if s[0] >= '0' && s[0] <= '9' {
		n := 0
		for _, c := range s {
			if c < '0' || c > '9' || n > 1000 {
				return 0, fmt.Errorf("bad signal %q", s)
			}
			n = n*10 + int(c-'0')
		}
		if n < 1 || n > maxSignal {
			return 0, fmt.Errorf("signal %d out of range 1-%d", n, maxSignal)
		}
		return syscall.Signal(n), nil
	}
	name := strings.ToUpper(s)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	if sig := signalNum(name); sig != 0 {
		return sig, nil
	}
	return 0, fmt.Errorf("unknown signal %q", s)
}

// checkPID refuses the pids multi must never signal.
func checkPID(pid int) error {
	if pid <= 1 || pid == os.Getpid() {
		return fmt.Errorf("%w %d", ErrUnsafePID, pid)
	}
	return nil
}
