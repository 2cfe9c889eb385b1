package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/internal/proc"
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

func newOutput(c *cli.Context, a *call) *output {
	o := &output{w: c.App.Writer, errw: c.App.ErrWriter, tty: isTerminal(c.App.Writer),
		quiet: a.Quiet, verbose: a.Verbose, json: a.JSON}
	o.color = useColor(o.tty, a.NoColor)
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

// result prints one node's line: "w1: started (pid 1234)", after the
// line of warnings, if any, on stderr.
func (o *output) result(r multi.Result) {
	if w := warnings(r); w != "" {
		if f, ok := o.w.(*bufio.Writer); ok {
			f.Flush() // in order with the lines before it
		}
		fmt.Fprintf(o.errw, "%s: warning: %s\n", r.Node.Name, nodes.Printable(w))
	}
	failed := r.Err != nil
	if o.quiet && !failed {
		return
	}
	if o.verbose {
		o.describe(r.Node)
	}
	io.WriteString(o.w, r.Node.Name+": "+o.resultLine(r, failed)+"\n")
}

// results prints a line per node, in one write where they fit: a start
// of many nodes returns as soon as they are ready, not after a write
// each.
func (o *output) results(rs []multi.Result) {
	w := o.w
	// Room for the lines of most results (a start's line is about 30
	// bytes), not 64 KiB for a few nodes: fresh pages the exit frees.
	bw := bufio.NewWriterSize(w, min(64<<10, max(4<<10, 128*len(rs))))
	o.w = bw
	defer func() {
		bw.Flush()
		o.w = w
	}()
	for _, r := range rs {
		o.result(r)
	}
}

// resultLine is what a result line says after the node's name, written
// from the result's Outcome and fields, with the word that tells what
// happened painted. failed says whether r counts as a failure (already
// running does not). Paths and errors in it can hold any byte: they are
// shown escaped ([nodes.Printable]), never raw.
func (o *output) resultLine(r multi.Result, failed bool) string {
	switch {
	case r.Outcome == multi.AlreadyRunning:
		// Starting what already runs is done, as LSB init scripts have it.
		if r.PID > 0 {
			return o.paint(yellow, fmt.Sprintf("already running (pid %d)", r.PID))
		}
		return o.paint(yellow, "already running (lock held by a process in another pid namespace)")
	case failed:
		return o.paint(red, "FAILED") + ": " + nodes.Printable(cause(r.Err))
	case r.Outcome == multi.NotRunning && r.HeldBy != 0:
		return o.paint(yellow, fmt.Sprintf("not running before; now started by someone else (pid %d)", r.HeldBy))
	case r.Outcome == multi.NotRunning:
		return o.paint(yellow, "not running")
	case r.Outcome == multi.StaleRemoved:
		return o.paint(yellow, "not running (stale pidfile removed)")
	case r.Outcome == multi.Killed && r.Lingering > 0:
		// Its lock was free; what its tree left in its cgroup (or
		// session) is gone.
		return o.paint(green, "killed") + " " + strings.Replace(processes(r.Lingering), " ", " lingering ", 1)
	case r.Outcome == multi.KilledAfterTimeout:
		// It did stop, but not when asked: that is worth a look.
		return o.paint(yellow, "killed") + fmt.Sprintf(" after %s (pid %d)", r.KilledAfter, r.PID) + left(r)
	}
	var word, rest string
	switch r.Outcome {
	case multi.Started, multi.Restarted, multi.Killed:
		word = r.Outcome.String()
		if r.TookOver {
			word, rest = "took", " over"
		}
	case multi.Signalled:
		word, rest = "sent", " "+pin.SignalName(r.Signal)
	case multi.Stopped:
		word = "stopped"
		if r.Exit != nil {
			return o.paint(green, word) + " from another shell (" + describeExit(r.Exit) + ")"
		}
	default:
		return o.paint(green, r.Outcome.String())
	}
	return o.paint(green, word) + rest + " (pid " + strconv.Itoa(r.PID) + ")" + left(r)
}

// left is what a stop left behind, after its line: the pidfile taken
// by a process started meanwhile, a node that had lost its lock.
func left(r multi.Result) string {
	var s string
	if r.HeldBy != 0 {
		s += fmt.Sprintf("; pidfile now held by pid %d", r.HeldBy)
	}
	if r.Lost {
		s += "; it had lost its pidfile's lock"
	}
	return s
}

// describeExit says how a process ended: "exit status 1", "killed by
// TERM".
func describeExit(e *multi.ExitStatus) string {
	if e.Signal != 0 {
		return "killed by " + pin.SignalName(e.Signal)
	}
	return fmt.Sprintf("exit status %d", e.Code)
}

// warnings is what the person should know although the verb did its job,
// in the order it happened: the pidfile's text that named another pid
// than its lock holder, the SIGKILL after the timeout, a record not
// written. "" if nothing.
func warnings(r multi.Result) string {
	pid := r.PID // the process signalled: for a restart, the old one
	if r.OldPID != 0 {
		pid = r.OldPID
	}
	var ws []string
	if r.FilePID != 0 {
		says := fmt.Sprintf("pid %d", r.FilePID)
		if r.FilePID < 0 {
			says = "no valid pid"
		}
		ws = append(ws, fmt.Sprintf("pidfile %s says %s but the lock holder is pid %d; using %d", r.Node.PidFile, says, pid, pid))
	}
	switch {
	case r.KilledAfter != 0 && r.Lingering > 0:
		how := "cgroup.kill"
		if r.Node.Cgroup == "" {
			how = "SIGKILL to each of its session"
		}
		ws = append(ws, fmt.Sprintf("%s of its tree still running after %s; killed them (%s)", processes(r.Lingering), r.KilledAfter, how))
	case r.KilledAfter != 0:
		ws = append(ws, fmt.Sprintf("still running after %s; sent KILL (pid %d)", r.KilledAfter, pid))
	}
	if r.RecordErr != nil {
		ws = append(ws, r.RecordErr.Error())
	}
	if r.TreeErr != nil {
		ws = append(ws, r.TreeErr.Error())
	}
	return strings.Join(ws, "; ")
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
