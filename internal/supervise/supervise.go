// Package supervise is the foreground run: it starts a set of nodes,
// stays with them as a container's PID 1 or a systemd Type=notify service
// would, reaps every child (the one waiter of the process: a
// [launch.Reaper] it makes and hands to every start), forwards signals,
// applies the exit policy to a node that exits on its own, says when the
// run is ready (the notify socket, a ready file) and stops every node on
// TERM. What it does to a node it asks of a [Host], package multi's
// Cluster, which keeps the words and the records.
package supervise

import (
	"bytes"
	"context"
	"errors"
	"io"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/launch"
	"github.com/multi-launcher/multi/internal/logwriter"
	"github.com/multi-launcher/multi/nodes"
)

// A Host does to the nodes of a run what the run asks: start, stop, and
// say what an exit means. Each call returns an [Outcome] per node, in the
// order of the nodes given.
type Host interface {
	// Check refuses the whole set before anything starts (two nodes with
	// one name, a record too large, no rundir), or with extra, when not
	// nil, as the reason; it reports each node it refuses.
	Check(extra error) ([]Outcome, bool)
	// StartAll starts every node of the run, handing rp to each start.
	StartAll(ctx context.Context, rp *launch.Reaper) []Outcome
	// Start starts n again (word: "restarted", "took over").
	Start(ctx context.Context, rp *launch.Reaper, n nodes.Node, word string) Outcome
	// StopWait stops ns as multi stopwait does, and waits for them.
	StopWait(ctx context.Context, ns []nodes.Node) []Outcome
	// Exited says that n's process pid ended with ws: stopped on purpose
	// from another shell, or on its own (Err then wraps [ErrNodeExited]).
	Exited(n nodes.Node, pid int, ws syscall.WaitStatus, onPurpose bool) Outcome
	// Fail is err, the run's failure on n, as the host reports it.
	Fail(n nodes.Node, err error) error
	// KillTree KILLs every process of n's tree where n has a cgroup of
	// its own (cgroup.kill), and reports whether it did: where it has
	// none, the run KILLs the node's process itself.
	KillTree(n nodes.Node) bool
}

// An Outcome is what the host did to one node: the pid it started, or
// the error it failed with. The host keeps its own, fuller record of
// each node's last result.
type Outcome struct {
	PID int
	Err error
	// Cgroup is the cgroup folder a node started runs in; "" where its
	// tree is its session.
	Cgroup string
}

// Options are a run's settings, their defaults filled in by the caller.
type Options struct {
	OnExit       string // StopAll, Restart or Ignore
	Backoff      time.Duration
	MaxBackoff   time.Duration
	Signal       syscall.Signal // the stop signal
	Timeout      time.Duration  // from the stop signal to SIGKILL
	Group        bool           // signals reach each node's process group
	RunDir       string         // where the run tags go
	ReadyFile    string
	NotifySocket string
	AllowShared  bool // the ready file's folder may be one others can write to
	WaitForLock  bool
	// MaxRestarts, if above 0, makes a node that would be restarted a
	// MaxRestarts+1-th time within RestartWindow fatal: left down.
	MaxRestarts   int
	RestartWindow time.Duration
	// Live, if not "", is a liveness check template (tcp, http, exec,
	// file; see LiveCheck) run every LiveInterval on each running node;
	// LiveFailures failures in a row stop the node, and OnExit applies.
	Live         string
	LiveInterval time.Duration
	LiveFailures int
	// Health, if not "", is the ADDRESS:PORT (or :PORT) the health
	// endpoints are served on: /readyz, /livez, /metrics.
	Health string
	Log    io.Writer // the run's own lines
	Stdout io.Writer // the nodes' output, if not nil (else their logfiles)
	Stderr io.Writer
	// Timestamps puts the time each line was read before it (RFC 3339,
	// UTC, microseconds); JSONLines writes each line as a JSON object
	// (time, node, stream, line) instead of "w1 | text".
	Timestamps, JSONLines bool
}

// formatLine appends to b a node's line as o's output has it, ending in
// a newline: "w1 | text", after its time with Timestamps, or a JSON
// object with JSONLines.
func (o *Options) formatLine(b []byte, now time.Time, name, stream string, line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte("\n"))
	if o.JSONLines {
		return logwriter.AppendJSONLine(b, now.UTC().Format(logwriter.StampLayout), name, stream, line)
	}
	if o.Timestamps {
		b = append(now.UTC().AppendFormat(b, logwriter.StampLayout), ' ')
	}
	b = append(append(b, name...), " | "...)
	return append(append(b, line...), '\n')
}

// The exit policies of [Options.OnExit].
const (
	StopAll = "stop-all"
	Restart = "restart"
	Ignore  = "ignore"
)

// Errors of a run.
var (
	// ErrFatal: a node exited more often than the crash-loop limit
	// (Options.MaxRestarts) allows, and was left down.
	ErrFatal = errors.New("fatal: restarted too often")
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
