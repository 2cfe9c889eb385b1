package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/multi-launcher/multi/internal/pin"
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
	case multi.Started:
		word = r.Outcome.String()
		if r.Exit != nil { // a one-shot run to its end (a done need)
			if r.PID <= 0 {
				return o.paint(green, word) + ", " + describeExit(r.Exit)
			}
			return o.paint(green, word) + " (pid " + strconv.Itoa(r.PID) + "), " + describeExit(r.Exit)
		}
		if r.TookOver {
			word, rest = "took", " over"
		}
	case multi.Restarted, multi.Killed:
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
