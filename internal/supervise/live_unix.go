//go:build unix

package supervise

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/internal/ready"
	"github.com/multi-launcher/multi/nodes"
)

// liveTarget is a node whose liveness is checked this round.
type liveTarget struct {
	rn  *runNode
	n   nodes.Node // n.Ready is its liveness check, expanded
	pid int
}

// parseLive sets each node's liveness check (Options.Live, expanded for
// it), or says why one cannot be: the run then does not begin.
func (r *run) parseLive() error {
	if r.o.Live == "" {
		return nil
	}
	for _, rn := range r.nodes {
		c, err := nodes.ExpandReady(r.o.Live, rn.n, "--live")
		if err != nil {
			return err
		}
		if !c.Kind.Probe() {
			return fmt.Errorf("%s: --live=%s: a liveness check is tcp, http, exec or file (notify, fd and log are seen only at start)", rn.n.Name, nodes.Printable(c.String()))
		}
		rn.live = c
	}
	return nil
}

// liveProbe bounds one liveness check.
const liveProbe = 5 * time.Second

// startLive runs the liveness check (Options.Live) of every node that
// runs, every LiveInterval, until the run ends. A node failing it
// LiveFailures times in a row is stopped, and the exit policy then
// applies to it (--on-exit=restart restarts it).
func (r *run) startLive() {
	if r.o.Live == "" {
		return
	}
	go func() {
		t := time.NewTicker(r.o.LiveInterval)
		defer t.Stop()
		fails := map[int]int{} // by pid: a new process starts afresh
		for {
			select {
			case <-r.done:
				return
			case <-t.C:
			}
			ups := make(chan []liveTarget, 1)
			r.post(func() { ups <- r.liveTargets() })
			var targets []liveTarget
			select {
			case targets = <-ups:
			case <-r.done:
				return
			}
			errs := make([]error, len(targets))
			var wg sync.WaitGroup
			for i, lt := range targets {
				wg.Go(func() { errs[i] = r.liveCheck(lt) })
			}
			wg.Wait()
			seen := map[int]int{}
			for i, lt := range targets {
				if errs[i] == nil {
					continue
				}
				seen[lt.pid] = fails[lt.pid] + 1
				if seen[lt.pid] >= r.o.LiveFailures {
					delete(seen, lt.pid)
					err := errs[i]
					r.post(func() { r.liveFailed(lt, err) })
				}
			}
			fails = seen
		}
	}()
}

// liveTargets are the nodes that run and are not starting; the loop's.
func (r *run) liveTargets() []liveTarget {
	var out []liveTarget
	for _, rn := range r.nodes {
		if rn.pid <= 0 || rn.starting || r.stopping {
			continue
		}
		n := rn.n
		n.Ready, n.Cgroup = rn.live, rn.cgroup
		out = append(out, liveTarget{rn: rn, n: n, pid: rn.pid})
	}
	return out
}

func (r *run) liveCheck(lt liveTarget) error {
	p, err := ready.NewProbe(lt.n, append(os.Environ(), lt.n.Env...), -1)
	if err != nil {
		return err
	}
	p.RunDir = r.o.RunDir
	p.Runner = r.rp.RunCheck // the run's reaper waits for every child
	ctx, cancel := context.WithTimeout(context.Background(), min(liveProbe, r.o.LiveInterval))
	defer cancel()
	return p.Run(ctx)
}

// liveFailed stops a node that failed its liveness check too often, if
// it is still the process checked.
func (r *run) liveFailed(lt liveTarget, why error) {
	if lt.rn.pid != lt.pid || r.stopping {
		return
	}
	r.logf("%s: failed its liveness check %d times in a row (%v): stopping it (pid %d); --on-exit=%s applies",
		lt.n.Name, r.o.LiveFailures, why, lt.pid, r.o.OnExit)
	if _, err := pin.SignalNode(lt.rn.n.PidFile, lt.pid, r.o.Signal, r.o.Group); err != nil {
		r.logf("%s: %v", lt.n.Name, err)
	}
	// One that ignores the signal is KILLed after the stop's timeout, as
	// the run's own stop does: else it would never be restarted.
	rn, pid := lt.rn, lt.pid
	time.AfterFunc(r.o.Timeout, func() { r.post(func() { r.liveKill(rn, pid) }) })
}

// liveKill KILLs the tree of a node stopped for its liveness check that
// is still the process stopped, after the stop's timeout: its cgroup
// (cgroup.kill) where it has one, and its process, the run's own child
// not yet reaped, so that its pid is still its own. The exit policy then
// applies as to any exit.
func (r *run) liveKill(rn *runNode, pid int) {
	if rn.pid != pid || r.stopping {
		return
	}
	r.logf("%s: still running %s after %s (--timeout); killing its tree (pid %d)",
		rn.n.Name, r.o.Timeout, pin.SignalName(r.o.Signal), pid)
	r.h.KillTree(rn.n)
	if err := r.rp.SignalKid(pid, syscall.SIGKILL); err != nil && !errors.Is(err, pin.ErrNotRunning) {
		r.logf("%s: %v", rn.n.Name, err)
	}
}
