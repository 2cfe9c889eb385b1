package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/urfave/cli/v2"
)

// output prints results for a person: colours and progress on a terminal
// only, less with --quiet, more with --verbose.
type output struct {
	w, errw io.Writer
	tty     bool // w is a terminal
	width   int  // the terminal's columns; 0 if unknown
	dumb    bool // TERM=dumb: no escape codes, so no progress line either
	color   bool
	quiet   bool
	verbose bool
	json    bool
}

func newOutput(c *cli.Context, a *Args) *output {
	o := &output{w: c.App.Writer, errw: c.App.ErrWriter, tty: isTerminal(c.App.Writer),
		quiet: a.Flags["quiet"] == "true", verbose: a.Flags["verbose"] == "true", json: a.Flags["json"] == "true"}
	o.color = useColor(o.tty, a.Flags["no-color"] == "true")
	o.dumb = os.Getenv("TERM") == "dumb"
	if o.tty {
		o.width = termWidth(c.App.Writer)
	}
	return o
}

// useColor reports whether to paint: on a terminal, unless told not to
// by --no-color, $NO_COLOR, or TERM=dumb (a terminal that knows no escape
// codes, such as an Emacs shell).
func useColor(tty, noColor bool) bool {
	return tty && !noColor && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
}

// isTerminal reports whether w is a character device such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

const (
	red    = "\033[31m"
	green  = "\033[32m"
	yellow = "\033[33m"
)

func (o *output) paint(color, s string) string {
	if !o.color {
		return s
	}
	return color + s + "\033[0m"
}

// result prints one node's line: "w1: started (pid 1234)".
func (o *output) result(r multi.Result) {
	if r.Warning != "" {
		fmt.Fprintf(o.errw, "%s: warning: %s\n", r.Node.Name, nodes.Printable(r.Warning))
	}
	failed := r.Err != nil && !errors.Is(r.Err, multi.ErrAlreadyRunning)
	if o.quiet && !failed {
		return
	}
	if o.verbose {
		o.describe(r.Node)
	}
	fmt.Fprintf(o.w, "%s: %s\n", r.Node.Name, o.resultLine(r, failed))
}

// resultLine is what a result line says after the node's name, with the
// word that tells what happened painted, chosen by the result's Outcome.
// failed says whether r counts as a failure (already running does not).
// Paths and errors in it can hold any byte: they are shown escaped
// ([nodes.Printable]), never raw.
func (o *output) resultLine(r multi.Result, failed bool) string {
	r.Msg = nodes.Printable(r.Msg)
	switch {
	case r.Outcome == multi.AlreadyRunning:
		// Starting what already runs is done, as LSB init scripts have it.
		return o.paint(yellow, r.Msg)
	case failed:
		return o.paint(red, "FAILED") + ": " + nodes.Printable(cause(r.Err))
	case r.Outcome == multi.NotRunning || r.Outcome == multi.StaleRemoved:
		return o.paint(yellow, r.Msg)
	case r.Outcome == multi.KilledAfterTimeout:
		// It did stop, but not when asked: that is worth a look.
		return o.paintFirst(yellow, r.Msg)
	}
	return o.paintFirst(green, r.Msg)
}

// paintFirst paints the first word of a result's message, the one that
// says what happened ("started", "stopped", "sent").
func (o *output) paintFirst(color, msg string) string {
	word, rest, ok := strings.Cut(msg, " ")
	if !ok {
		return o.paint(color, word)
	}
	return o.paint(color, word) + " " + rest
}

// cause is a verb's or status's error without the "multi: VERB NAME: "
// its text starts with (the line begins with the node's name already):
// the cause a [multi.NodeError] wraps.
func cause(err error) string {
	var ne *multi.NodeError
	if errors.As(err, &ne) {
		return ne.Err.Error()
	}
	return err.Error()
}

// statusErrText is why a node's status is unknown.
func statusErrText(s multi.Status) string { return nodes.Printable(cause(s.Err)) }

// describe prints what --verbose adds for a node: its command line and
// files.
func (o *output) describe(n nodes.Node) {
	cmd := "(no command)"
	if len(n.Command) > 0 {
		cmd = nodes.Quote(n.Command)
	}
	fmt.Fprintf(o.w, "%s: %s  [pidfile %s, logfile %s]\n", n.Name, cmd, nodes.Printable(n.PidFile), nodes.Printable(n.LogFile))
}

// progress shows, on a terminal, one line about the verb's progress,
// redrawn in place and cleared when the verb is done, before the per-node
// lines; never with --json or --quiet, never when not on a terminal (or
// on TERM=dumb, which knows no escape codes). stopwait and kill show from their first moment what they wait for and
// for how long ("waiting for 3 of 50: w7 (pid 4242) 3s…"); the other
// verbs, on two nodes or more, a count of the nodes done. It returns the
// function that clears the line.
func (o *output) progress(verb string, c *multi.Cluster) (clear func()) {
	waits := verb == "stopwait" || verb == "kill"
	if !o.tty || o.dumb || o.json || o.quiet || (!waits && len(c.Nodes) < 2) {
		return func() {}
	}
	p := &progressLine{w: o.w, verb: verb, waits: waits, total: len(c.Nodes), width: o.width, begin: time.Now(),
		pending: map[string]pendingNode{}, index: map[string]int{}}
	if p.width <= 0 {
		p.width = 80
	}
	for i, n := range c.Nodes {
		p.index[n.Name] = i
	}
	c.Progress = func(r multi.Result) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.done++
		delete(p.pending, r.Node.Name)
		p.draw(false)
	}
	if !waits {
		return p.clear
	}
	c.Signalled = func(r multi.Result) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.pending[r.Node.Name] = pendingNode{pid: r.PID, since: time.Now()}
		p.draw(false)
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
