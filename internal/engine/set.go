// Package engine does the verbs' work on a set of nodes for package
// multi, whose Cluster is its public face: start (batches, records, the
// settle window), stop and stopwait (the pipeline of signals, waits,
// escalation and removals, on internal/pin and package waiter), restart,
// status and lost nodes. It reports in its own [Result], which multi
// turns into its public one.
package engine

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/internal/launch"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/waiter"
)

// A Set is one call's view of a Cluster: its nodes and settings, and the
// options of the call under way.
type Set struct {
	// The settings of package multi's Cluster, which documents them.
	Nodes              []nodes.Node
	RunDir             string
	Progress           func(Result)
	LockTimeout        time.Duration
	Detach             bool
	Settle             time.Duration
	ReadyTimeout       time.Duration
	Env                []string
	AllowSharedFolders bool
	// Clean: a start kills what is left of a node's last tree first.
	Clean bool
	// Mu, if not nil, is the Progress lock of the caller's Cluster:
	// Progress is called one call at a time across its verbs.
	Mu *sync.Mutex

	progressMu sync.Mutex
	// stop is the StopOptions of the call under way, on the Set a verb
	// makes for its own call (see with); zero on the caller's.
	stop StopOptions
	// rp is the reaper of the Run under way (see RunStart), handed to
	// every start; nil elsewhere.
	rp *launch.Reaper
	// cg is the containment of this call's starts, found once (see
	// containment).
	cgOnce sync.Once
	cg     cgroup.Containment
	// scanned is the last look at /proc for nodes' sessions, begun at
	// scanAt, scanTicks after boot (see procs).
	scanMu    sync.Mutex
	scanAt    time.Time
	scanTicks uint64
	scanned   *procScan
}

// StopOptions are package multi's StopOptions, which documents them.
type StopOptions struct {
	Signal    syscall.Signal
	Timeout   time.Duration
	Wait      waiter.Strategy
	Group     bool
	Lost      bool
	Signalled func(Result)
}

// RestartOptions are package multi's RestartOptions.
type RestartOptions struct {
	Stop           StopOptions
	Rolling        bool
	MaxUnavailable int
}

// signal is what the call's stop sends first.
func (c *Set) signal() syscall.Signal {
	if c.stop.Signal == 0 {
		return syscall.SIGTERM
	}
	return c.stop.Signal
}

// with returns the Cluster one call of a verb works on: c's settings,
// o for its stops, and c's Progress lock. The verb never writes to c, so
// that nothing a verb does changes the caller's value, and two verbs on
// one Cluster can run at once with different options.
func (c *Set) with(o StopOptions) *Set {
	v := c.sub(c.Nodes)
	v.stop, v.Mu = o, c.progressLock()
	return v
}

// sub is a new Cluster with c's settings on ns, without c's call state.
func (c *Set) sub(ns []nodes.Node) *Set {
	// Field by field: a Set holds a lock and is not copied whole.
	return &Set{
		Nodes:        ns,
		RunDir:       c.RunDir,
		Progress:     c.Progress,
		LockTimeout:  c.LockTimeout,
		Detach:       c.Detach,
		Settle:       c.Settle,
		ReadyTimeout: c.ReadyTimeout,
		Env:          c.Env,

		AllowSharedFolders: c.AllowSharedFolders,
		Clean:              c.Clean,
	}
}

func (c *Set) progressLock() *sync.Mutex {
	if c.Mu != nil {
		return c.Mu
	}
	return &c.progressMu
}

// RunDirPath is the rundir c's nodes are recorded in.
func (c *Set) RunDirPath() string { return c.rundir() }

func (c *Set) rundir() string {
	if c.RunDir == "" {
		return nodes.DefaultRunDir()
	}
	return c.RunDir
}

func (c *Set) env() []string {
	if c.Env == nil {
		// Not $NOTIFY_SOCKET: it is this process's service manager's (a
		// run's own readiness goes there), not the nodes', whose READY=1
		// would make the manager take the service for ready; a node with
		// --ready=notify gets a socket of its own.
		return slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "NOTIFY_SOCKET=") })
	}
	return c.Env
}

// nodeEnv is n's environment: c's, then n's own entries, which win (the
// last of duplicate keys counts, as in os/exec).
func (c *Set) nodeEnv(n nodes.Node) []string {
	env := c.env()
	return append(env[:len(env):len(env)], n.Env...)
}

// report hands a final result to c.Progress, one call at a time.
func (c *Set) report(r *Result) {
	r.stamp()
	if c.Progress == nil {
		return
	}
	mu := c.progressLock()
	mu.Lock()
	defer mu.Unlock()
	c.Progress(*r)
}

func (c *Set) results() []Result {
	if c.AllowSharedFolders {
		nodes.AcceptShared(c.rundir(), c.Nodes)
	}
	out := make([]Result, len(c.Nodes))
	now := time.Now()
	for i, n := range c.Nodes {
		out[i].Node, out[i].begun = n, now
	}
	return out
}

// each runs f on every result with at most workers at once. Results not
// reached because ctx ended fail with ctx's error.
func (c *Set) each(ctx context.Context, results []Result, workers int, f func(int, *Result)) {
	sem := make(chan struct{}, max(workers, 1))
	var wg sync.WaitGroup
	for i := range results {
		r := &results[i]
		select {
		case <-ctx.Done():
			if r.Err == nil && r.Outcome == NoOutcome {
				r.fail("start", ctx.Err())
			}
			continue
		case sem <- struct{}{}:
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f(i, r)
		}()
	}
	wg.Wait()
}
