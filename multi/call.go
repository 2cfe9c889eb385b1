package multi

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/celery"
	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/internal/launch"
	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/internal/safefs"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/waiter"
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
	// startsOwnReport: the starts do not report their results, which the
	// verb reports itself (a restart, which may start a node again as it
	// was).
	startsOwnReport bool
	// plan is how the call stops its nodes.
	plan stopPlan
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

// call returns the call a verb on c works on, stopping nodes as p says.
func (c *Cluster) call(p stopPlan) *call {
	settle := c.Settle
	if settle == 0 {
		settle = DefaultSettle
		if slices.ContainsFunc(c.Nodes, func(n nodes.Node) bool { return celery.Is(n.Command) }) {
			settle = celery.Settle
		}
	}
	return &call{Cluster: c, settle: max(settle, 0), clean: c.Clean, plan: p}
}

// A stopPlan is how one verb stops its nodes, worked out once from the
// StopOptions it was given ([StopOptions.plan]); every step of the stop
// reads it, and nothing else.
type stopPlan struct {
	sig       syscall.Signal // sent first
	timeout   time.Duration  // if positive, SIGKILL to what is left after it
	wait      waiter.Strategy
	group     bool
	lost      bool
	signalled func(Result)
}

// plan is the stop o asks for: o.Signal (SIGTERM if 0) first, SIGKILL
// after o.Timeout if positive.
func (o StopOptions) plan() stopPlan {
	sig := o.Signal
	if sig == 0 {
		sig = syscall.SIGTERM
	}
	return stopPlan{sig: sig, timeout: max(o.Timeout, 0), wait: o.Wait, group: o.Group, lost: o.Lost, signalled: o.Signalled}
}

// killPlan is the stop of Kill: SIGKILL at once.
func (o StopOptions) killPlan() stopPlan {
	p := o.plan()
	p.sig, p.timeout = syscall.SIGKILL, 0
	return p
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

// nodeEnv is n's environment: c's, then n's own entries, then those of
// its env files, read now (the last of duplicate keys counts, as in
// os/exec). A file that cannot be read, or that others could have
// written, is an error naming it.
func (c *call) nodeEnv(n nodes.Node) ([]string, error) {
	env := c.env()
	env = append(env[:len(env):len(env)], n.Env...)
	for _, path := range n.EnvFiles {
		b, err := safefs.ReadFile(path, envFileMax)
		if err != nil {
			return nil, fmt.Errorf("env file: %w", err)
		}
		kvs, err := nodes.ReadEnvFile(bytes.NewReader(b), path)
		if err != nil {
			return nil, err
		}
		env = append(env, kvs...)
	}
	return env, nil
}

// envFileMax is the largest env file read.
const envFileMax = 1 << 20

// startReport reports a start's result, unless the verb does.
func (c *call) startReport(r *Result) {
	if !c.startsOwnReport {
		c.report(r)
	}
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
