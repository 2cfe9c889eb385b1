package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/multi"
)

// progress shows, on a terminal, one line about the verb's progress,
// redrawn in place and cleared when the verb is done, before the per-node
// lines; never with --json or --quiet, never when not on a terminal (or
// on TERM=dumb, which knows no escape codes). A verb that waits (stopwait,
// kill) shows from its first moment what it waits for and
// for how long ("waiting for 3 of 50: w7 (pid 4242) 3s…"); the other
// verbs, on two nodes or more, a count of the nodes done. It returns the
// function that clears the line. It sets c.Progress, and so.Signalled for
// a verb that waits.
func (o *output) progress(verb string, waits bool, c *multi.Cluster, so *multi.StopOptions) (clear func()) {
	readyWait := readyWaits(verb, c.Nodes)
	if !o.tty || o.dumb || o.json || o.quiet || (!waits && !readyWait && len(c.Nodes) < 2) {
		return func() {}
	}
	p := &progressLine{w: o.w, verb: verb, waits: waits, total: len(c.Nodes), width: o.width, begin: time.Now(),
		pending: map[string]pendingNode{}, index: map[string]int{}, readyWait: readyWait, left: map[string]bool{}}
	if p.width <= 0 {
		p.width = 80
	}
	for i, n := range c.Nodes {
		p.index[n.Name], p.left[n.Name] = i, true
	}
	c.Progress = func(r multi.Result) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.done++
		delete(p.pending, r.Node.Name)
		delete(p.left, r.Node.Name)
		p.draw(false)
	}
	if !waits && !readyWait {
		return p.clear
	}
	if waits {
		so.Signalled = func(r multi.Result) {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.pending[r.Node.Name] = pendingNode{pid: r.PID, since: time.Now()}
			p.draw(false)
		}
	}
	p.mu.Lock()
	p.draw(true) // at once: what is about to happen
	p.mu.Unlock()
	// Redraw as time passes: the seconds waited are the news.
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				p.mu.Lock()
				p.draw(true)
				p.mu.Unlock()
			}
		}
	}()
	return func() {
		close(stop)
		<-stopped
		p.clear()
	}
}

// stillWaitingAfter is when a verb that waits, not on a terminal, first
// says what it still waits for; stillWaitingEvery how often after.
var stillWaitingAfter, stillWaitingEvery = 5 * time.Second, 30 * time.Second

// stillWaiting makes a verb that signals and waits (stopwait, kill,
// restart) say on stderr, when it shows no progress line (not on a
// terminal, TERM=dumb, --json), what it still waits for after 5 s and
// every 30 s after: the nodes signalled and not yet down, with their
// pids, and how to end the wait. A wait is never silent. It chains
// c.Progress and so.Signalled, and returns the function that ends it.
func (o *output) stillWaiting(verb string, c *multi.Cluster, so *multi.StopOptions) (stop func()) {
	if o.quiet || o.tty && !o.dumb && !o.json {
		return func() {}
	}
	var mu sync.Mutex
	pending := map[string]int{} // signalled, not yet done: name to pid
	index := map[string]int{}
	for i, n := range c.Nodes {
		index[n.Name] = i
	}
	progress, signalled := c.Progress, so.Signalled
	c.Progress = func(r multi.Result) {
		mu.Lock()
		delete(pending, r.Node.Name)
		mu.Unlock()
		if progress != nil {
			progress(r)
		}
	}
	so.Signalled = func(r multi.Result) {
		mu.Lock()
		pending[r.Node.Name] = r.PID
		mu.Unlock()
		if signalled != nil {
			signalled(r)
		}
	}
	hint := "Ctrl-C leaves them running"
	switch {
	case so.Signal != syscall.SIGKILL && so.Timeout > 0:
		hint = "KILL at --timeout, " + hint
	case so.Signal != syscall.SIGKILL:
		hint = "--timeout=DURATION would KILL what is left, " + hint
	}
	begin := time.Now()
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTimer(stillWaitingAfter)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			mu.Lock()
			for n, pid := range pending {
				// Down but not yet reported: a restart starts it
				// again, its result comes after (a zombie is down).
				if st, err := proc.Read(pid); errors.Is(err, fs.ErrNotExist) || err == nil && st.Gone() {
					delete(pending, n)
				}
			}
			names := slices.SortedFunc(maps.Keys(pending), func(a, b string) int { return index[a] - index[b] })
			list := make([]string, 0, min(len(names), 10))
			for _, n := range names[:min(len(names), 10)] {
				list = append(list, fmt.Sprintf("%s (pid %d)", n, pending[n]))
			}
			if len(names) > 10 {
				list = append(list, fmt.Sprintf("and %d more", len(names)-10))
			}
			mu.Unlock()
			if len(list) > 0 {
				fmt.Fprintf(o.errw, "multi %s: still waiting after %s for %d of %d to end: %s; %s\n",
					verb, time.Since(begin).Round(time.Second), len(names), len(c.Nodes), strings.Join(list, ", "), hint)
			}
			t.Reset(stillWaitingEvery)
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// progressLine is the state of progress's line; mu guards it all.
type progressLine struct {
	mu          sync.Mutex
	w           io.Writer
	verb        string
	waits       bool // the verb signals, then waits
	total, done int
	width       int
	begin, last time.Time
	shown       bool
	pending     map[string]pendingNode // signalled, not yet done
	index       map[string]int         // a node's place in the set
	// readyWait: start waits for readiness checks; left holds the nodes
	// not yet done.
	readyWait bool
	left      map[string]bool
}

type pendingNode struct {
	pid   int
	since time.Time
}

// draw redraws the line; unless force, at most every 100 ms (and always
// for the last node), so that a thousand results do not flood a terminal.
func (p *progressLine) draw(force bool) {
	now := time.Now()
	if !force && p.done < p.total && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last, p.shown = now, true
	fmt.Fprint(p.w, "\r\033[K"+elide(p.text(now), p.width-1))
}

func (p *progressLine) text(now time.Time) string {
	if p.readyWait && p.done < p.total && (!p.waits || len(p.pending) == 0) {
		return p.readyText(now)
	}
	if !p.waits || p.done == p.total {
		word := map[string]string{"start": "started", "stop": "signalled", "stopwait": "stopped",
			"kill": "killed", "restart": "restarted"}[p.verb]
		return fmt.Sprintf("%s: %d/%d %s, %.1fs", p.verb, p.done, p.total, word, now.Sub(p.begin).Seconds())
	}
	if len(p.pending) == 0 {
		return fmt.Sprintf("%s: signalling %d of %d…", p.verb, p.total-p.done, p.total)
	}
	// The node waited for longest; of those signalled together, the
	// first in the set.
	name, first := "", pendingNode{}
	for n, pn := range p.pending {
		if name == "" || pn.since.Before(first.since) || pn.since.Equal(first.since) && p.index[n] < p.index[name] {
			name, first = n, pn
		}
	}
	return fmt.Sprintf("%s: waiting for %d of %d: %s (pid %d) %ds…", p.verb, len(p.pending), p.total, name, first.pid,
		int(now.Sub(first.since).Seconds()))
}

// clear removes the line, if it was drawn.
func (p *progressLine) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
