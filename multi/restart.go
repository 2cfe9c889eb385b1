package multi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/multi-launcher/multi/internal/launch"
	"github.com/multi-launcher/multi/internal/record"

	"github.com/multi-launcher/multi/internal/pin"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/waiter"
)

// restartEach signals every node of results and starts each again as soon
// as it is down.
func (c *call) restartEach(ctx context.Context, results []Result) {
	index := make(map[*Result]int, len(results))
	for i := range results {
		index[&results[i]] = i
	}
	was := make([]bool, len(results))
	// Bounds the starts under way at once: each holds descriptors through
	// its settle window.
	sem := make(chan struct{}, max(1, waiter.DescriptorBudget()/2/startFDs))
	var starts sync.WaitGroup
	c.stopWait(ctx, results, stopOpts{op: "restart", was: was,
		down: func(r *Result) {
			i := index[r]
			if r.Err != nil {
				// A node that could not be stopped is not started twice.
				c.report(r)
				return
			}
			starts.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				c.restartOne(ctx, results[i:i+1], was[i])
			})
		}})
	starts.Wait()
}

// restartRolling restarts the nodes of results k at a time (one, without
// --max-unavailable): each group stopped together, each of its nodes
// started again (and ready, with a check) before the next group is
// signalled.
func (c *call) restartRolling(ctx context.Context, results []Result, k int) {
	for lo := 0; lo < len(results); lo += k {
		group := results[lo:min(lo+k, len(results))]
		was := make([]bool, len(group))
		c.stopWait(ctx, group, stopOpts{op: "restart", was: was})
		var wg sync.WaitGroup
		for i := range group {
			if group[i].Err != nil {
				c.report(&group[i])
				continue
			}
			wg.Go(func() { c.restartOne(ctx, group[i:i+1], was[i]) })
		}
		wg.Wait()
		halted := ""
		for i := range group {
			if group[i].Err != nil && halted == "" {
				halted = group[i].Node.Name
			}
		}
		if halted == "" {
			continue
		}
		// Not up again: the rest stay as they are, so that no more
		// nodes go down.
		for j := lo + len(group); j < len(results); j++ {
			r := &results[j]
			r.fail("restart", fmt.Errorf("%w at %s", errRollingHalted, halted))
			c.report(r)
		}
		return
	}
}

// restartOne starts the one node of one again, once the process stopped
// for it (if was) is gone, and reports it.
//
// A node that was running, given a new command (or options, folder,
// environment) that exits at once or is not ready, is started again as
// it was recorded: a
// restart with a bad option leaves the node running its old command, and
// fails saying so.
func (c *call) restartOne(ctx context.Context, one []Result, was bool) {
	defer c.report(&one[0])
	if was {
		one[0].OldPID = one[0].PID
		c.awaitGone(ctx, &one[0])
	}
	word := func(int) (string, bool) {
		if was {
			return "restarted", true
		}
		return "started", true
	}
	prev, prevErr := record.Read(c.rundir(), one[0].Node.Name)
	c.startAll(ctx, one, word)
	r := &one[0]
	if !was || prevErr != nil || !errors.Is(r.Err, ErrExitedAtOnce) && !errors.Is(r.Err, ErrNotReady) || sameRun(prev, r.Node) || ctx.Err() != nil {
		return
	}
	failed := *r
	again := []Result{{Node: prev, begun: r.begun, OldPID: r.OldPID}}
	c.startAll(ctx, again, word)
	if again[0].Err != nil {
		return // failed is the answer; how the old command fared is not
	}
	r.Node, r.PID, r.Ready, r.Containment = prev, again[0].PID, again[0].Ready, again[0].Containment
	r.fail("restart", fmt.Errorf("%w; its old command started again (pid %d)", errors.Unwrap(failed.Err), again[0].PID))
	r.Exit = failed.Exit
}

// sameRun reports whether a and b run the same command the same way: a
// start of b would be one of a.
func sameRun(a, b nodes.Node) bool {
	return slices.Equal(a.Command, b.Command) && a.Dir == b.Dir && slices.Equal(a.Env, b.Env)
}

// awaitGone waits, at most pin.GoneWait and while ctx lasts, for the process
// r's node signalled (r.PID) to be gone, when it is the process the node's
// record names (same start time, through a pidfd). A node can release its
// lock a moment before its process exits (a self-locking one does); a
// start in that moment would find the recorded process alive without its
// lock and call it lost. A zombie counts as gone. On failure the start's
// own check says what remains.
func (c *call) awaitGone(ctx context.Context, r *Result) {
	_, st, err := record.ReadStarted(c.rundir(), r.Node.Name)
	if err != nil || st.PID <= 1 || st.PID != r.PID {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, pin.GoneWait)
	defer cancel()
	pin.WaitLost(wctx, st)
}

// startable says why n's command could not be started again as it is
// recorded, or nil: its folder gone, or its program not found or not
// executable. The program is looked up as the exec step does: a name
// with a slash in n.Dir, another on env's PATH (never through an empty or
// "." element).
func startable(n nodes.Node, env []string) error {
	if len(n.Command) == 0 {
		return ErrNoCommand
	}
	if n.Dir != "" {
		st, err := os.Stat(n.Dir)
		if err != nil {
			return fmt.Errorf("working folder: %w", err)
		}
		if !st.IsDir() {
			return fmt.Errorf("working folder %s: not a folder", n.Dir)
		}
		// Reached as the start will reach it: no link someone else
		// could have swapped in, and for a relative command a folder
		// only root or this user can write to.
		wd, err := launch.OpenWorkDir(n)
		if err != nil {
			return err
		}
		wd.Close()
	}
	prog := n.Command[0]
	inDir := func(p string) string {
		if n.Dir != "" && !filepath.IsAbs(p) {
			return filepath.Join(n.Dir, p)
		}
		return p
	}
	if strings.Contains(prog, "/") {
		return runnable(prog, inDir(prog))
	}
	path, _ := launch.LookPATH(env)
	for _, d := range filepath.SplitList(path) {
		if d == "" || d == "." {
			continue
		}
		if runnable(prog, filepath.Join(inDir(d), prog)) == nil {
			return nil
		}
	}
	return fmt.Errorf("program %q: %w in $PATH", prog, launch.ErrCommandNotFound)
}

// runnable says why the file at path, for program prog, cannot be
// executed, or nil.
func runnable(prog, path string) error {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Errorf("program %q: %w: %w", prog, launch.ErrCommandNotFound, err)
	case st.IsDir() || !st.Mode().IsRegular():
		return fmt.Errorf("program %q: %w: %s is not a regular file", prog, launch.ErrCommandNotExecutable, path)
	case st.Mode()&0o111 == 0:
		return fmt.Errorf("program %q: %w: %s has no execute permission", prog, launch.ErrCommandNotExecutable, path)
	}
	return nil
}
