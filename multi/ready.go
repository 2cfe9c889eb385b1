package multi

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/internal/ready"
	"github.com/multi-launcher/multi/nodes"
)

// defaultReadyTimeout is how long start waits for a node to pass its
// readiness check when Set.ReadyTimeout is 0.
const defaultReadyTimeout = 60 * time.Second

// unreadyGrace is how long a node not ready in time has, after TERM,
// before it gets KILL.
const unreadyGrace = 10 * time.Second

// probeTimeout bounds one run of a check while start waits; the last
// one before the ready timeout gets at least probeFloor, so that the
// error it gives is the check's, not a cut-short one.
const (
	probeTimeout = time.Second
	probeFloor   = 100 * time.Millisecond
)

func (c *call) readyTimeout() time.Duration {
	if c.ReadyTimeout <= 0 {
		return defaultReadyTimeout
	}
	return c.ReadyTimeout
}

// readyEnv is n's environment, with its own $NOTIFY_SOCKET for a notify
// check (nt, which the caller closes).
func (c *call) readyEnv(n nodes.Node) (env []string, nt *ready.Notify, err error) {
	if env, err = c.nodeEnv(n); err != nil {
		return nil, nil, err
	}
	if n.Ready.Kind != nodes.Notify {
		return env, nil, nil
	}
	if nt, err = ready.ListenNotify(c.rundir(), n.Name); err != nil {
		return nil, nil, err
	}
	return append(env[:len(env):len(env)], nt.Env()), nt, nil
}

// readyWait starts waiting for each node of the batch started that has a
// readiness check, each in its own goroutine; the func returned waits
// until every wait is over, its outcome in the node's started.readyErr.
func (c *call) readyWait(ctx context.Context, results []Result, ss []*started) func() {
	var wg sync.WaitGroup
	for i, s := range ss {
		if s != nil && results[i].Node.Ready.Kind != "" && !results[i].runOnce {
			wg.Go(func() {
				s.readyErr = c.awaitReady(ctx, results[i].Node, s)
				// Under a run, whose stop cut it short, the run stops the
				// node as it stops the others.
				if s.readyErr == nil && !s.checked && ctx.Err() != nil && c.rp == nil {
					s.cut = fmt.Errorf("its readiness check (%s) not passed yet: %w; left running (pid %d)", results[i].Node.Ready, ctx.Err(), s.child.PID())
				}
			})
		}
	}
	return wg.Wait
}

// awaitReady runs n's check until it passes (nil), the node exits (its
// exit status and last log lines), or the ready timeout runs out (the
// node is stopped, and the error says so). When ctx ends first the node
// is left to finishStart, as when a settle window is cut short.
func (c *call) awaitReady(ctx context.Context, n nodes.Node, s *started) error {
	ch := s.child
	timeout := c.readyTimeout()
	// From now, not from the spawn: a standby node (run --wait-for-lock)
	// may have waited long for its lock.
	deadline := time.Now().Add(timeout)
	env, err := c.nodeEnv(n)
	if err != nil {
		return fmt.Errorf("%w; %s", err, ch.Stop(unreadyGrace))
	}
	p, err := ready.NewProbe(n, env, ch.LogOffset())
	if err != nil {
		return fmt.Errorf("%w; %s", err, ch.Stop(unreadyGrace))
	}
	p.RunDir = c.rundir()
	if c.rp != nil {
		p.Runner = c.rp.RunCheck // under a run, its reaper waits for every child
	}
	// A protocol the node speaks, rather than a check run.
	var said interface {
		Wake() <-chan struct{}
		State() (bool, string, error)
	}
	var wake <-chan struct{}
	run := c.rp != nil
	switch c := p.Check(); {
	case s.notify != nil:
		s.notify.Watch(ch.PID())
		if !run { // a run reads it on (keepNotify)
			defer s.notify.Close() // as soon as it is over, not after the last node
		}
		said = s.notify
	case ch.ReadyPipe() != nil:
		defer ch.ReadyPipe().Close()
		said = ready.WatchLine(ch.ReadyPipe(), c.Target)
	}
	if said != nil {
		wake = said.Wake()
	}
	var status string // the node's last STATUS=
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		var last error
		if said != nil {
			var ok bool
			var serr error
			ok, status, serr = said.State()
			switch {
			case serr != nil:
				return fmt.Errorf("%w (%s): %w; %s", ready.ErrNotReady, n.Ready, serr, ch.Stop(unreadyGrace))
			case !ok && status != "":
				last = fmt.Errorf("no READY=1 yet (STATUS=%s)", status)
			case !ok && s.notify != nil:
				last = fmt.Errorf("no READY=1 yet")
			case !ok:
				last = fmt.Errorf("no line on descriptor %s yet", p.Check().Target)
			}
		} else {
			pctx, cancel := context.WithTimeout(ctx, min(probeTimeout, max(time.Until(deadline), probeFloor)))
			last = p.Run(pctx)
			cancel()
		}
		if last == nil {
			// Its lock checked now, each node as it is ready, rather than
			// all of them after the last: start returns sooner.
			if err := ch.Recheck(); err != nil {
				return fmt.Errorf("%w (%s): %w", ready.ErrNotReady, n.Ready, err)
			}
			s.checked = true
			c.recordReady(n, s, status)
			if c.Detach {
				// Nothing is left to check: let it go now, not in the
				// tail after the last node.
				ch.LetGo(true)
				s.letGo = true
			}
			return nil
		}
		if ch.Exited() {
			if err := ch.Recheck(); err != nil {
				return fmt.Errorf("%w (%s): %w", ready.ErrNotReady, n.Ready, err)
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w within %s: %w; %s", ready.ErrNotReady, timeout, last, ch.Stop(unreadyGrace))
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-wake:
		case <-ctx.Done():
		}
		t.Stop()
	}
}

// statusProbe bounds each check status runs: a probe's own deadline
// (a kubelet's exec probe) must not be spent on one slow node.
const statusProbe = 500 * time.Millisecond

// statusReady runs, at once for every running node of out with a check,
// its check, and sets Ready and ReadyErr. A check that only a start can
// see pass (notify, fd, log) counts the running node ready when the start
// of this very process recorded it so (seenCheck).
func (c *call) statusReady(ctx context.Context, out []Status) {
	var wg sync.WaitGroup
	for i := range out {
		s := &out[i]
		if s.Node.Ready.Kind == "" || s.State != StateRunning || s.PID <= 0 {
			continue
		}
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, statusProbe)
			defer cancel()
			env, err := c.nodeEnv(s.Node)
			var p *ready.Probe
			if err == nil {
				p, err = ready.NewProbe(s.Node, env, -1)
			}
			if err == nil {
				p.RunDir = c.rundir()
				if k := p.Check().Kind; !k.Probe() {
					err = c.seenCheck(pctx, s, k)
				} else {
					err = p.Run(pctx)
				}
			}
			switch {
			case err == nil:
				s.Ready = Ready
				return
			case young(s.PID, c.readyTimeout()):
				s.Ready = Starting
			default:
				s.Ready = Unready
			}
			s.ReadyErr = err
		})
	}
	wg.Wait()
}

// young reports whether pid started less than d ago.
func young(pid int, d time.Duration) bool {
	p, err := proc.Read(pid)
	if err != nil || p.Start().IsZero() {
		return false
	}
	return time.Since(p.Start()) < d
}
