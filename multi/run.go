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

// A RunError is how a [Cluster.Run] that did not end cleanly ended.
type RunError struct {
	Code    int      // the exit code (see [Cluster.Run])
	Node    string   // the node that decided it, if one did
	Err     error    // why: a [*NodeError], with a sentinel where one applies
	Results []Result // each node's last result, in the Cluster's order
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

const (
	StopAll     OnExit = "stop-all" // stop the others and end the run with the node's status, as tini does
	RestartNode OnExit = "restart"  // start it again, after [RunOptions.Backoff]
	Ignore      OnExit = "ignore"   // leave it down; the others run on
)

// DefaultRunTimeout is how long Run waits after the stop signal before
// SIGKILL: below Docker's 10 s, so that multi kills, and says so.
const DefaultRunTimeout = 8 * time.Second

// The backoff of a restart when [RunOptions] leave it zero.
const (
	defaultBackoff    = time.Second
	defaultMaxBackoff = time.Minute
)

// RunOptions tune [Cluster.Run]. The zero value is the default.
type RunOptions struct {
	OnExit OnExit      // what a node's own exit does; "" is [StopAll]
	Stop   StopOptions // how the nodes stop; a zero Timeout is [DefaultRunTimeout]
	// Backoff is the delay before a restart ([RestartNode]), doubled at
	// each up to MaxBackoff; 0 means 1 s, and 1 min.
	Backoff, MaxBackoff time.Duration
	// Stdout and Stderr, if not nil, get the nodes' output, each line as
	// "w1 | text" (after its RFC 3339 time with Timestamps; a JSON object
	// of time, node, stream and line with JSONLines); else their logfiles do.
	Stdout, Stderr        io.Writer
	Timestamps, JSONLines bool
	Log                   io.Writer // what Run says itself
	ReadyFile             string    // made once every node is ready, removed at the stop
	NotifySocket          string    // gets READY=1, STOPPING=1; "" means $NOTIFY_SOCKET
	// WaitForLock makes a node whose lock another holds wait for it, and
	// take the node over at the holder's death, instead of failing.
	WaitForLock bool
	// MaxRestarts, if above 0, leaves down (fatal) a node that exits
	// again after that many restarts within RestartWindow (0: 1 min).
	MaxRestarts   int
	RestartWindow time.Duration
	// Live is a liveness check template (tcp:, http:, exec:, file:) run
	// on each node every LiveInterval (0: 10 s); LiveFailures (0: 3) in a
	// row stop the node, and OnExit applies.
	Live         string
	LiveInterval time.Duration
	LiveFailures int
	Health       string // ADDRESS:PORT or :PORT to serve /readyz, /livez, /metrics on
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

// Run starts every node as Start does and stays in the foreground (a
// container's PID 1, a systemd Type=notify service) until they are
// stopped, as README's "multi run" says: it reaps every child, stops every
// node at SIGTERM or the end of ctx, forwards SIGHUP and SIGUSR1, and
// applies o.OnExit. It returns the exit code the run should end with, as
// tini's; a code other than 0 comes with a [*RunError].
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
		Log: o.Log, Stdout: o.Stdout, Stderr: o.Stderr, Timestamps: o.Timestamps, JSONLines: o.JSONLines,
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
