package multi

import (
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/nodes"
)

// Errors of a node whose command cannot be run; [Cluster.Run] exits with
// 127 and 126 for them, as tini and the shells do.

// Errors of [Cluster.Run], which its [*RunError] wraps (as it wraps
// [launch.ErrCommandNotFound], [launch.ErrCommandNotExecutable], [launch.ErrExitedAtOnce] and
// [ErrDuplicateNode] when they decide the run's end).
var (
	// ErrRunUnderWay: another Run is under way in this process; reaping is
	// process-wide, so there is at most one.
	ErrRunUnderWay = errors.New("another run is under way in this process")
	// ErrNodeExited: a node of the run exited on its own; with OnExit
	// [StopAll] or [Ignore] its exit status decides the run's.
	ErrNodeExited = errors.New("exited")
	// ErrStopFailed: the run could not stop a node through its pidfile
	// (see [Cluster.Run]).
	ErrStopFailed = errors.New("could not stop it through its pidfile")
)

// A RunError is how a [Cluster.Run] that did not end cleanly ended: the
// exit code it should end with, the node that decided it, why, and each
// node's last result.
type RunError struct {
	// Code is the exit code, as tini reports it (see [Cluster.Run]).
	Code int
	// Node names the node that decided Code; "" when none did.
	Node string
	// Err says why; it wraps a [*NodeError] and a sentinel such as
	// [launch.ErrCommandNotFound], [ErrNodeExited] or [ErrDuplicateNode].
	Err error
	// Results holds each node's last result in the run, in the order of
	// the Cluster's Nodes: started, stopped, or failed with Err saying
	// why (a node that exited on its own: Failed, wrapping
	// [ErrNodeExited]).
	Results []Result
}

func (e *RunError) Error() string {
	return fmt.Sprintf("%v (exit code %d)", e.Err, e.Code)
}

// Unwrap returns the cause.
func (e *RunError) Unwrap() error { return e.Err }

// ExitCode is the exit code the run should end with.
func (e *RunError) ExitCode() int { return e.Code }

// OnExit is what [Cluster.Run] does when a node exits on its own.
type OnExit string

// The policies of [RunOptions.OnExit].
const (
	// StopAll stops every other node and ends the run with the node's exit
	// status, so that the engine (Docker, Kubernetes, systemd, Nomad)
	// restarts the whole container or unit. As tini and honcho do.
	StopAll OnExit = "stop-all"
	// RestartNode starts the node again after a delay that doubles with each
	// exit, from [RunOptions.Backoff] up to [RunOptions.MaxBackoff].
	RestartNode OnExit = "restart"
	// Ignore leaves the node down; the others keep running.
	Ignore OnExit = "ignore"
)

// ParseOnExit parses the value of --on-exit.
func ParseOnExit(s string) (OnExit, error) {
	switch p := OnExit(s); p {
	case StopAll, RestartNode, Ignore:
		return p, nil
	case "":
		return StopAll, nil
	}
	return "", fmt.Errorf("--on-exit is stop-all, restart or ignore, not %q", s)
}

// Defaults of [RunOptions].
const (
	// DefaultRunTimeout is how long Run waits after the stop signal before
	// it kills the nodes left, when the run's Stop.Timeout is zero (see [RunOptions]): below
	// Docker's 10 s, so that the nodes are killed by multi, which then
	// reports them, and not with multi by the engine.
	DefaultRunTimeout = 8 * time.Second
	// DefaultBackoff is the first delay before a restart.
	DefaultBackoff = time.Second
	// DefaultMaxBackoff caps the delay before a restart.
	DefaultMaxBackoff = time.Minute
)

// RunOptions tune [Cluster.Run]. The zero value is the default.
type RunOptions struct {
	// OnExit is what to do when a node exits on its own; "" means
	// [StopAll].
	OnExit OnExit
	// Stop tunes how the run stops its nodes: Signal, Timeout (0 means
	// [DefaultRunTimeout]), Group, Wait, Lost and Signalled, as for
	// [Cluster.StopWait].
	Stop StopOptions
	// Backoff is the delay before the first restart (OnExit
	// [RestartNode]); it doubles with every restart up to MaxBackoff, and starts again from
	// Backoff once the node has run for MaxBackoff. 0 means
	// [DefaultBackoff]; MaxBackoff 0 means [DefaultMaxBackoff].
	Backoff, MaxBackoff time.Duration
	// Stdout and Stderr, if not nil, get each node's standard output and
	// error, line by line, each line prefixed with the node's name
	// ("w1 | text"). If nil, the nodes write to their logfiles, as with
	// [Cluster.Start].
	Stdout, Stderr io.Writer
	// Log gets what Run itself has to say: a node that exited, a restart,
	// a signal forwarded. nil: nothing is said.
	Log io.Writer
	// ReadyFile, if set, is created once every node holds its lock, and
	// removed when the run stops (a readiness probe: test -e).
	ReadyFile string
	// NotifySocket is where READY=1 and STOPPING=1 are sent (systemd's
	// Type=notify); "" means $NOTIFY_SOCKET, and none when that is unset.
	// A name starting with '@' is an abstract socket.
	NotifySocket string
	// WaitForLock makes a node whose lock is held by another process (in
	// another container sharing the pidfile folder, say) wait for it
	// instead of failing the run: the node's exec step blocks in the
	// kernel (F_SETLKW) and takes the node over the moment the holder
	// dies. The run is ready only once every node holds its lock.
	WaitForLock bool
}

func (o RunOptions) backoff() (first, max time.Duration) {
	first, max = o.Backoff, o.MaxBackoff
	if first <= 0 {
		first = DefaultBackoff
	}
	if max <= 0 {
		max = DefaultMaxBackoff
	}
	return first, max
}

// runTagExt names the tag [Cluster.Run] leaves in the rundir for each
// node it runs: RUNDIR/NAME.run. A stop, stopwait, kill or restart from
// another shell removes it before it signals the node, so when Run sees
// the node exit with its tag gone, the node was stopped on purpose and is
// not a failure. Removed before the signal, the tag is already gone when
// the exit is seen: no race with the exit, whatever the node's exit code
// (a celery worker exits 0 on TERM, another program 143).
const runTagExt = ".run"

// untagRun removes the node's run tag when op with sig asks the node to
// end; without a run there is none, and nothing happens. The rundir is
// reached without following an untrusted link: one swapped for a link
// makes root remove nothing elsewhere.
func (c *Cluster) untagRun(name string, op string, sig syscall.Signal) {
	if endsNode(op, sig) {
		nodes.RemoveIn(c.rundir(), name+runTagExt)
	}
}

// endsNode reports whether op with sig asks the node to end: stopwait,
// kill and restart always do; stop and signal do with TERM, INT, QUIT,
// KILL (not with HUP, USR1 and the like, which ask it to reload or
// report).
func endsNode(op string, sig syscall.Signal) bool {
	if op != "stop" && op != "signal" {
		return true
	}
	switch sig {
	case syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGKILL:
		return true
	}
	return false
}
