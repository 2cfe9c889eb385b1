package multi

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
)

// The verbs in the order of the need graph (needs.go): start in its
// waves, stop and restart in reverse.

// startInOrder starts the nodes of results wave by wave, each wave
// through startAll, each node once its needs are met: the others fail,
// saying which need, and why, unless they run already.
func (c *call) startInOrder(ctx context.Context, results []Result, g *needGraph) {
	g.markOnce(results)
	started := func(int) (string, bool) { return "started", true }
	for _, wave := range g.waves {
		for _, i := range wave {
			// One whose needs are not met is still looked at: if it runs
			// already, it is left be (startOne).
			results[i].unmet = c.needsMet(ctx, g, results, i, "started")
		}
		onSub(results, wave, func(sub []Result) { c.startAll(ctx, sub, started) })
	}
}

// onSub runs f on the results of results at idx, copied out and back: a
// verb's helpers work on a slice of results.
func onSub(results []Result, idx []int, f func([]Result)) {
	if len(idx) == 0 {
		return
	}
	sub := make([]Result, len(idx))
	for k, i := range idx {
		sub[k] = results[i]
	}
	f(sub)
	for k, i := range idx {
		results[i] = sub[k]
	}
}

// needsMet says why node i of results must not start (word: "started",
// "started again"), an error matching [ErrNeedUnmet], or nil once each
// node it needs has reached the need's condition.
func (c *call) needsMet(ctx context.Context, g *needGraph, results []Result, i int, word string) error {
	for _, e := range g.edges[i] {
		if len(e.to) == 0 {
			if why := c.outsideUnmet(ctx, g, e); why != "" {
				return g.unmet(i, word, fmt.Sprintf("needs %s (%s), which %s", e.need.Name, e.need.Cond, why))
			}
			continue
		}
		for _, j := range e.to {
			name := results[j].Node.Name
			if name != e.need.Name {
				name += " of " + e.need.Name
			}
			if why := c.unmetBy(ctx, g, results, j, e.need.Cond); why != "" {
				return g.unmet(i, word, fmt.Sprintf("needs %s (%s), which %s", name, e.need.Cond, why))
			}
		}
	}
	return nil
}

// unmet records why as the chain that failed node i, and returns the
// error saying so.
func (g *needGraph) unmet(i int, word, why string) error {
	g.why[i] = why
	return &needError{is: ErrNeedUnmet, msg: "not " + word + ": " + why}
}

// unmetBy says how node j of the set, which a start has dealt with, has
// not reached cond ("FAILED", "is not ready"), "" if it has.
func (c *call) unmetBy(ctx context.Context, g *needGraph, results []Result, j int, cond nodes.Condition) string {
	r := &results[j]
	switch {
	case r.Err != nil && g.why[j] != "" && errors.Is(r.Err, ErrNeedUnmet):
		return g.why[j]
	case r.Err != nil:
		return "FAILED"
	case r.Outcome != Started && r.Outcome != Restarted && r.Outcome != AlreadyRunning:
		return "was not started"
	}
	ran := r.Outcome != AlreadyRunning
	switch cond {
	case nodes.AfterDone:
		switch {
		case !ran:
			return "was running already, not run to its end by this start"
		case r.Exit == nil || r.Exit.Code != 0:
			return "did not run to its end"
		}
	case nodes.AfterReady:
		switch {
		case r.Node.Ready.Kind == "":
		case ran && r.Ready != Ready:
			return "is not ready"
		case !ran:
			return readyWhy(g.status(ctx, c, r.Node))
		}
	}
	return ""
}

// outsideUnmet says how the node outside the set e names, as its record
// has it, has not reached e's condition, "" if it has.
func (c *call) outsideUnmet(ctx context.Context, g *needGraph, e needEdge) string {
	if e.need.Cond == nodes.AfterDone {
		return "is not in this set: only a node started with it is run to its end"
	}
	s := g.status(ctx, c, e.rec)
	if e.need.Cond == nodes.AfterReady && e.rec.Ready.Kind != "" {
		return readyWhy(s)
	}
	if s.State != StateRunning {
		return "is " + string(s.State)
	}
	return ""
}

// readyWhy says how the node s is the status of is not running and
// ready, "" if it is.
func readyWhy(s Status) string {
	switch {
	case s.State != StateRunning:
		return "is " + string(s.State)
	case s.Ready == Ready:
		return ""
	case s.ReadyErr != nil:
		return fmt.Sprintf("is %s (%v)", s.Ready, s.ReadyErr)
	}
	return "is " + string(s.Ready)
}

// status is n's status, its readiness included, looked at once per
// call.
func (g *needGraph) status(ctx context.Context, c *call, n nodes.Node) Status {
	g.seenMu.Lock()
	defer g.seenMu.Unlock()
	if s, ok := g.seen[n.Name]; ok {
		return s
	}
	n = record.ResolveNode(c.rundir(), n)
	out := make([]Status, 1)
	if err := c.status(ctx, &out[0], n, time.Now()); err != nil {
		out[0].State, out[0].Err = StateUnknown, err
	}
	c.statusReady(ctx, out)
	if g.seen == nil {
		g.seen = map[string]Status{}
	}
	g.seen[n.Name] = out[0]
	return out[0]
}

// finishOnce waits for a node run to its end (one a need's done names)
// to exit, within the ready timeout, instead of a settle window or a
// readiness check. Its record stays, naming no process, so that status
// says it stopped; so does a node that failed. ctx ending first leaves
// it running, recorded.
func (c *call) finishOnce(ctx context.Context, r *Result, s *started) {
	ch := s.child
	if s.notify != nil {
		s.notify.Close()
	}
	if p := ch.ReadyPipe(); p != nil {
		p.Close()
	}
	r.PID, r.Containment = ch.PID(), containmentOf(r.Node)
	err := ch.Wait(ctx, c.readyTimeout(), unreadyGrace)
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		r.fail("start", fmt.Errorf("not run to its end: %w; left running (pid %d)", err, r.PID))
		return
	}
	s.tx.recordDown()
	dropCgroup(c.rundir(), r.Node)
	if err != nil {
		r.fail("start", err)
		return
	}
	r.Outcome, r.Exit = Started, &ExitStatus{}
}

// stopInOrder is stopWait on results in the reverse order of their
// waves: a node is signalled once every node of the set that needs it is
// down. One whose user did not go down is not signalled, and fails
// ([ErrNeedUnmet]); a result failed already is left as it is.
func (c *call) stopInOrder(ctx context.Context, results []Result, g *needGraph, o stopOpts) {
	was := o.was
	for w := len(g.waves) - 1; w >= 0; w-- {
		var todo []int
		for _, i := range g.waves[w] {
			if results[i].Err != nil {
				continue
			}
			if user := g.upUser(results, i); user != "" {
				results[i].fail(o.op, &needError{is: ErrNeedUnmet, msg: "not stopped: needed by " + user + ", which did not stop"})
				if o.report {
					c.report(&results[i])
				}
				continue
			}
			todo = append(todo, i)
		}
		onSub(results, todo, func(sub []Result) {
			if was != nil {
				o.was = make([]bool, len(sub))
			}
			c.stopWait(ctx, sub, o)
			for k, i := range todo {
				if was != nil {
					was[i] = o.was[k]
				}
			}
		})
	}
}

// upUser names a node of the set that needs node i and is not down, ""
// if none is.
func (g *needGraph) upUser(results []Result, i int) string {
	for _, k := range g.users[i] {
		r := &results[k]
		switch {
		case r.Err != nil:
		case r.Outcome == Stopped, r.Outcome == Killed, r.Outcome == KilledAfterTimeout, r.Outcome == NotRunning, r.Outcome == StaleRemoved:
			continue
		}
		return r.Node.Name
	}
	return ""
}

// reverse is the nodes of the set, last wave first.
func (g *needGraph) reverse() []int {
	var out []int
	for w := len(g.waves) - 1; w >= 0; w-- {
		out = append(out, g.waves[w]...)
	}
	return out
}

// restartInOrder restarts the nodes of results (those failed already
// are left as they are): stopped in the reverse order of their waves,
// then started again wave by wave, each once its needs are met.
func (c *call) restartInOrder(ctx context.Context, results []Result, g *needGraph) {
	g.markOnce(results)
	reported := make([]bool, len(results))
	for i := range results {
		reported[i] = results[i].Err != nil
	}
	was := make([]bool, len(results))
	c.stopInOrder(ctx, results, g, stopOpts{op: "restart", was: was})
	for _, wave := range g.waves {
		var wg sync.WaitGroup
		for _, i := range wave {
			r := &results[i]
			if r.Err == nil {
				r.unmet = c.needsMet(ctx, g, results, i, "started again")
			}
			if r.Err != nil {
				if !reported[i] {
					c.report(r)
				}
				continue
			}
			wg.Go(func() { c.restartOne(ctx, results[i:i+1], was[i]) })
		}
		wg.Wait()
	}
}

// stopOrder is the order in which a stop signals the nodes of results:
// the set's, or, with After, the reverse of their waves; false (every
// result failed) for a cycle.
func (c *call) stopOrder(op string, results []Result) ([]int, bool) {
	if !hasAfter(c.Nodes) {
		order := make([]int, len(results))
		for i := range order {
			order[i] = i
		}
		return order, true
	}
	g, err := c.needGraph(results, false)
	if err != nil {
		failAll(results, op, err)
		return nil, false
	}
	return g.reverse(), true
}

// stopAll is stopWait on results, with After in the reverse order of the
// nodes' waves (stopInOrder).
func (c *call) stopAll(ctx context.Context, results []Result, o stopOpts) {
	if !hasAfter(c.Nodes) {
		c.stopWait(ctx, results, o)
		return
	}
	if !c.checkDistinct(o.op, results) {
		return
	}
	g, err := c.needGraph(results, false)
	if err != nil {
		failAll(results, o.op, err)
		return
	}
	c.stopInOrder(ctx, results, g, o)
}
