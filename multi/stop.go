package multi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/waiter"
)

// Stop sends c.Signal to every running node and returns without waiting.
// A stale pidfile is removed and never signalled.
func (c *Cluster) Stop(ctx context.Context) ([]Result, error) {
	results := c.results()
	sig := c.signal()
	for i := range results {
		r := &results[i]
		if err := ctx.Err(); err != nil {
			r.fail("stop", err)
		} else if c.signalOne(r, "stop", sig) {
			r.Msg = fmt.Sprintf("sent %s (pid %d)", SignalName(sig), r.PID)
		}
		c.report(r)
	}
	return results, joinErrs(results)
}

// StopWait sends c.Signal to every running node, then waits until each
// node's lock is released and removes its pidfile. With a Timeout, nodes
// still holding their lock when it runs out get SIGKILL, and are waited
// for again. If ctx ends the wait, the nodes still running fail with ctx's
// error.
func (c *Cluster) StopWait(ctx context.Context) ([]Result, error) {
	results := c.results()
	c.stopWait(ctx, "stopwait", results, c.signal(), c.Timeout, nil, true)
	return results, joinErrs(results)
}

// Kill sends SIGKILL to every running node, waits until each lock is
// released, and removes the pidfiles.
func (c *Cluster) Kill(ctx context.Context) ([]Result, error) {
	results := c.results()
	c.stopWait(ctx, "kill", results, syscall.SIGKILL, 0, nil, true)
	return results, joinErrs(results)
}

// stopWait signals the nodes of results and waits for them. When was is
// not nil, it records which nodes were running. With report, each result
// goes to c.Progress once final.
func (c *Cluster) stopWait(ctx context.Context, op string, results []Result, sig syscall.Signal, timeout time.Duration, was []bool, report bool) {
	var targets []waiter.Target
	byPath := map[string]*Result{}
	final := func(r *Result) {
		if report {
			c.report(r)
		}
	}
	// Lost nodes signalled (SignalLost) are waited for through pidfds,
	// beside the others.
	var lostWait sync.WaitGroup
	defer lostWait.Wait()
	for i := range results {
		r := &results[i]
		if err := ctx.Err(); err != nil {
			r.fail(op, err)
			final(r)
			continue
		}
		if IsStopSignal(sig) {
			r.fail(op, fmt.Errorf("%w (%s)", ErrStopSignal, SignalName(sig)))
			final(r)
			continue
		}
		if !c.signalOne(r, op, sig) {
			final(r)
			continue
		}
		if was != nil {
			was[i] = true
		}
		if r.lost.PID != 0 {
			lostWait.Go(func() {
				c.awaitLost(ctx, op, r, sig, timeout)
				final(r)
			})
			continue
		}
		targets = append(targets, waiter.Target{Path: r.Node.PidFile, PID: r.PID})
		byPath[r.Node.PidFile] = r
	}
	if len(targets) == 0 {
		return
	}
	released := map[string]bool{}
	done := func(t waiter.Target, err error) {
		r := byPath[t.Path]
		released[t.Path] = true
		if err != nil {
			r.fail(op, err)
		} else {
			c.stopped(r, op, sig)
		}
		final(r)
	}
	wctx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		wctx, cancel = context.WithTimeout(ctx, timeout)
	}
	err := waiter.WaitAll(wctx, targets, c.Wait, done)
	cancel()
	if err == nil {
		return
	}
	pending := func() []waiter.Target {
		var left []waiter.Target
		for _, t := range targets {
			if !released[t.Path] {
				left = append(left, t)
			}
		}
		return left
	}
	giveUp := func(left []waiter.Target, err error) {
		for _, t := range left {
			r := byPath[t.Path]
			r.fail(op, fmt.Errorf("still running (pid %d): %w", t.PID, err))
			final(r)
		}
	}
	if ctx.Err() != nil || sig == syscall.SIGKILL {
		giveUp(pending(), ctx.Err())
		return
	}
	// The timeout ran out: SIGKILL the same processes, and wait again.
	for _, t := range pending() {
		r := byPath[t.Path]
		if _, err := signalNode(t.Path, t.PID, syscall.SIGKILL, c.Group); err != nil && !errors.Is(err, ErrNotRunning) {
			r.fail(op, err)
			released[t.Path] = true
			final(r)
			continue
		}
		r.warn(fmt.Sprintf("still running after %s; sent KILL (pid %d)", timeout, t.PID))
	}
	left := pending()
	if err := waiter.WaitAll(ctx, left, c.Wait, func(t waiter.Target, err error) {
		r := byPath[t.Path]
		released[t.Path] = true
		if err != nil {
			r.fail(op, err)
		} else {
			c.stopped(r, op, sig)
			r.Msg = fmt.Sprintf("killed after %s (pid %d)", timeout, t.PID) + strings.TrimPrefix(r.Msg, fmt.Sprintf("stopped (pid %d)", t.PID))
		}
		final(r)
	}); err != nil {
		giveUp(pending(), err)
	}
}

// signalOne sends sig to r.Node through its lock and reports whether it
// did. When it did not, r says why: not running (a stale pidfile is
// removed), or a failure.
func (c *Cluster) signalOne(r *Result, op string, sig syscall.Signal) bool {
	info, err := signalNode(r.Node.PidFile, 0, sig, c.Group)
	switch {
	case errors.Is(err, ErrNotRunning):
		if c.lostOne(r, op, sig, info) {
			return r.Err == nil
		}
		c.notRunning(r, op, info)
		return false
	case err != nil:
		r.PID = info.PID
		r.fail(op, err)
		return false
	}
	if info.Mismatch() {
		r.warn(fmt.Sprintf("pidfile %s says %s but the lock holder is pid %d; using %d",
			r.Node.PidFile, describeFilePID(info), info.PID, info.PID))
	}
	r.PID = info.PID
	return true
}

func describeFilePID(info nodes.Info) string {
	if info.FileErr != nil {
		return "no valid pid"
	}
	return fmt.Sprintf("pid %d", info.FilePID)
}

// notRunning reports a node with nothing to signal, as info found it,
// removing a stale pidfile.
func (c *Cluster) notRunning(r *Result, op string, info nodes.Info) {
	if info.State == nodes.Absent {
		r.Msg = "not running"
		return
	}
	err := nodes.RemoveStale(r.Node.PidFile)
	var held *nodes.HeldError
	switch {
	case errors.As(err, &held):
		// Started by someone else since we looked: leave it be.
		r.PID = held.PID
		r.Msg = fmt.Sprintf("not running before; now started by someone else (pid %d)", held.PID)
	case err != nil:
		r.fail(op, fmt.Errorf("stale pidfile not removed: %w", err))
	default:
		r.Msg = "not running (stale pidfile removed)"
	}
}

// stopped reports a node whose lock was released and removes its pidfile,
// unless another instance has locked it since.
func (c *Cluster) stopped(r *Result, op string, sig syscall.Signal) {
	word := "stopped"
	if sig == syscall.SIGKILL {
		word = "killed"
	}
	r.Msg = fmt.Sprintf("%s (pid %d)", word, r.PID)
	err := nodes.RemoveStale(r.Node.PidFile)
	var held *nodes.HeldError
	switch {
	case errors.As(err, &held):
		r.Msg += fmt.Sprintf("; pidfile now held by pid %d", held.PID)
	case err != nil:
		r.fail(op, fmt.Errorf("stopped, but %w", err))
	}
}
