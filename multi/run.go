package multi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/multi-launcher/multi/internal/supervise"
)

// A RunError is how a [Cluster.Run] that did not end cleanly ended: the
// exit code it should end with, the node that decided it, why, and each
// node's last result.
type RunError struct {
	// Code is the exit code, as tini reports it (see [Cluster.Run]).
	Code int
	// Node names the node that decided Code; "" when none did.
	Node string
	// Err says why; it wraps a [*NodeError], and a sentinel such as
	// [ErrCommandNotFound] or [ErrDuplicateNode] where one applies.
	Err error
	// Results holds each node's last result in the run, in the order of
	// the Cluster's Nodes: started, stopped, or failed with Err saying
	// why (a node that exited on its own: Failed, with its Exit).
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

// Defaults of [RunOptions].
const (
	// DefaultRunTimeout is how long Run waits after the stop signal before
	// it kills the nodes left, when the run's Stop.Timeout is zero (see [RunOptions]): below
	// Docker's 10 s, so that the nodes are killed by multi, which then
	// reports them, and not with multi by the engine.
	DefaultRunTimeout = 8 * time.Second
)

// The backoff of a restart when [RunOptions] leave it zero.
const (
	defaultBackoff    = time.Second
	defaultMaxBackoff = time.Minute
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
	// 1 s; MaxBackoff 0 means 1 min.
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
	// MaxRestarts, if above 0, limits restarts (OnExit [RestartNode]): a
	// node that exits again after MaxRestarts restarts within
	// RestartWindow (0 means 1 min) is fatal: left down, its exit status
	// the run's, the other nodes running on.
	MaxRestarts   int
	RestartWindow time.Duration
	// Live, if not "", is a liveness check (tcp:, http:, exec:, file:,
	// as [nodes.ParseReady]; %-letters expanded per node) run on each
	// running node every LiveInterval (0: 10 s); a node failing it
	// LiveFailures times in a row (0: 3) is stopped (its stop signal),
	// and OnExit then applies to it.
	Live         string
	LiveInterval time.Duration
	LiveFailures int
	// Health, if not "", is where Run serves /readyz (200 once every
	// node is ready), /livez (200 unless a node is fatal or the run
	// stops) and /metrics (the Prometheus text format: up, ready,
	// restarts, exits, start time and last exit status per node):
	// ADDRESS:PORT, numeric or localhost, or :PORT for every address.
	Health string
}

func (o RunOptions) backoff() (first, max time.Duration) {
	first, max = o.Backoff, o.MaxBackoff
	if first <= 0 {
		first = defaultBackoff
	}
	if max <= 0 {
		max = defaultMaxBackoff
	}
	return first, max
}

// Run starts every node as [Cluster.Start] does and stays in the
// foreground, as a container's PID 1 or a systemd Type=notify service,
// until they are stopped; status, stop, stopwait, kill and logs work on
// them from another shell meanwhile. It
//
//   - reaps every child, its nodes and, as PID 1 or a child subreaper,
//     every orphan of their trees (only one Run per process: else
//     [ErrRunUnderWay]);
//   - stops every node on SIGTERM, SIGINT, SIGQUIT or the end of ctx as
//     StopWait does (o.Stop.Signal, SIGKILL after o.Stop.Timeout,
//     [DefaultRunTimeout] when zero); a second one kills them at once;
//     SIGHUP, SIGUSR1, SIGUSR2 and SIGWINCH are forwarded to every node;
//   - applies [RunOptions.OnExit] to a node that exits on its own; a node
//     stopped on purpose by another multi is not a failure and stays down;
//   - sends READY=1 to the notify socket and makes the ready file once
//     every node holds its lock, STOPPING=1 when the stop begins.
//
// It returns the exit code the run should end with, as tini reports it:
// the first node that exited unexpectedly decides (its code, or
// 128+signal; 127 when its program does not exist, 126 when it cannot be
// executed, 1 for another failure to start); after a requested stop, 0
// when every node exited 0 or by the stop signal, 1 when one could not be
// stopped through its pidfile (the run then signals its own child, and
// KILLs it after the timeout). A code other than 0 comes with a
// [*RunError]. A library caller gets its process back as it was (the
// subreaper flag, its signal handling); Run changes neither c nor o.
func (c *Cluster) Run(ctx context.Context, o RunOptions) (int, error) {
	if o.Stop.Timeout <= 0 {
		o.Stop.Timeout = DefaultRunTimeout
	}
	h := newRunHost(c, o.Stop)
	first, most := o.backoff()
	code, why := supervise.Run(ctx, h, c.Nodes, supervise.Options{
		OnExit: string(o.OnExit), Backoff: first, MaxBackoff: most,
		Signal: h.v.plan.sig, Timeout: h.v.plan.timeout, Group: h.v.plan.group,
		RunDir: h.v.rundir(), ReadyFile: o.ReadyFile, NotifySocket: o.NotifySocket,
		AllowShared: c.AllowSharedFolders, WaitForLock: o.WaitForLock,
		MaxRestarts: o.MaxRestarts, RestartWindow: cmp.Or(o.RestartWindow, time.Minute), Health: o.Health,
		Live: o.Live, LiveInterval: cmp.Or(o.LiveInterval, 10*time.Second), LiveFailures: cmp.Or(o.LiveFailures, 3),
		Log: o.Log, Stdout: o.Stdout, Stderr: o.Stderr,
	})
	if errors.Is(why, ErrRunUnderWay) || errors.Is(why, errors.ErrUnsupported) {
		return code, fmt.Errorf("multi: run: %w", why)
	}
	if code == 0 {
		return 0, nil
	}
	e := &RunError{Code: code, Err: why, Results: h.results()}
	var ne *NodeError
	if errors.As(why, &ne) {
		e.Node = ne.Node
	}
	return code, e
}
