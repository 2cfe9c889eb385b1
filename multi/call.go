package multi

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
	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
)

// A call is one verb's work on a Cluster: the Cluster's nodes and
// settings, read through it and never written, and what the call itself
// decides (its stop options, its settle window, the reaper of a run).
// Two verbs on one Cluster run at once, each with its own call.
type call struct {
	*Cluster
	// settle is the settle window of the call's starts: the Cluster's,
	// its default filled in; 0 or less is none (a run's).
	settle time.Duration
	// clean: a start kills what is left of a node's last tree first.
	clean bool
	// stop is the StopOptions of the call.
	stop StopOptions
	// rp is the reaper of the Run under way (see runStart), handed to
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

// call returns the call a verb on c works on, with o for its stops.
func (c *Cluster) call(o StopOptions) *call {
	settle := c.Settle
	if settle == 0 {
		settle = DefaultSettle
	}
	return &call{Cluster: c, settle: max(settle, 0), clean: c.Clean, stop: o}
}

// signal is what the call's stop sends first.
func (c *call) signal() syscall.Signal {
	if c.stop.Signal == 0 {
		return syscall.SIGTERM
	}
	return c.stop.Signal
}

func (c *call) rundir() string {
	if c.RunDir == "" {
		return nodes.DefaultRunDir()
	}
	return c.RunDir
}

func (c *call) env() []string {
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
func (c *call) nodeEnv(n nodes.Node) []string {
	env := c.env()
	return append(env[:len(env):len(env)], n.Env...)
}

// report hands a final result to c.Progress, one call at a time across
// the verbs under way on the Cluster.
func (c *call) report(r *Result) {
	r.stamp()
	if c.Progress == nil {
		return
	}
	c.progressMu.Lock()
	defer c.progressMu.Unlock()
	c.Progress(*r)
}

func (c *call) results() []Result {
	if c.AllowSharedFolders {
		record.AcceptShared(c.rundir(), c.Nodes)
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
func (c *call) each(ctx context.Context, results []Result, workers int, f func(int, *Result)) {
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
