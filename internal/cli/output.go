package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
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
	color   bool
	quiet   bool
	verbose bool
	json    bool
}

func newOutput(c *cli.Context, a *Args) *output {
	o := &output{w: c.App.Writer, errw: c.App.ErrWriter, tty: isTerminal(c.App.Writer),
		quiet: a.Flags["quiet"] == "true", verbose: a.Flags["verbose"] == "true", json: a.Flags["json"] == "true"}
	o.color = useColor(o.tty, a.Flags["no-color"] == "true")
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
		fmt.Fprintf(o.errw, "%s: warning: %s\n", r.Node.Name, r.Warning)
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
// word that tells what happened painted. multi.Result hands the outcome to
// the CLI as a sentence for a person (Result.String: "w1: started (pid
// 1234)", "w1: FAILED: reason"), not as a value to switch on, so the
// word to colour is cut out of that sentence; this function and
// statusErrText are the only places that read multi's text back. failed
// says whether r counts as a failure (already running does not).
func (o *output) resultLine(r multi.Result, failed bool) string {
	line := strings.TrimPrefix(r.String(), r.Node.Name+": ")
	switch {
	case errors.Is(r.Err, multi.ErrAlreadyRunning):
		// Starting what already runs is done, as LSB init scripts have it.
		line = o.paint(yellow, r.Msg)
	case failed:
		line = o.paint(red, "FAILED") + strings.TrimPrefix(line, "FAILED")
	case strings.HasPrefix(line, "not running"):
		line = o.paint(yellow, line)
	case strings.HasPrefix(line, "killed after"):
		// It did stop, but not when asked: that is worth a look.
		word, rest, _ := strings.Cut(line, " ")
		line = o.paint(yellow, word) + " " + rest
	default:
		word, rest, _ := strings.Cut(line, " ")
		line = o.paint(green, word) + " " + rest
	}
	return strings.TrimSpace(line)
}

// statusErrText is why a node's status is unknown, without the "multi:
// status NAME: " that the error's text starts with: the line already
// begins with the node's name. Like resultLine it reads multi's error
// text, because a Status offers its reason only as an error.
func statusErrText(s multi.Status) string {
	return strings.TrimPrefix(s.Err.Error(), "multi: status "+s.Node.Name+": ")
}

// describe prints what --verbose adds for a node: its command line and
// files.
func (o *output) describe(n nodes.Node) {
	cmd := "(no command)"
	if len(n.Command) > 0 {
		cmd = nodes.Quote(n.Command)
	}
	fmt.Fprintf(o.w, "%s: %s  [pidfile %s, logfile %s]\n", n.Name, cmd, n.PidFile, n.LogFile)
}

// progress shows, on a terminal, a one-line count of the nodes done so
// far, which gives way to the per-node lines; never with --json or
// --quiet, never when not on a terminal. It returns the function that
// clears the line.
func (o *output) progress(verb string, c *multi.Cluster) (clear func()) {
	if !o.tty || o.json || o.quiet || len(c.Nodes) < 2 {
		return func() {}
	}
	word := map[string]string{"start": "started", "stop": "signalled", "stopwait": "stopped",
		"kill": "killed", "restart": "restarted"}[verb]
	begin, last := time.Now(), time.Time{}
	done, shown := 0, false
	c.Progress = func(multi.Result) {
		done++
		if now := time.Now(); done == len(c.Nodes) || now.Sub(last) >= 100*time.Millisecond {
			last, shown = now, true
			fmt.Fprintf(o.w, "\r\033[K%s: %d/%d %s, %.1fs", verb, done, len(c.Nodes), word, now.Sub(begin).Seconds())
		}
	}
	return func() {
		if shown {
			fmt.Fprint(o.w, "\r\033[K")
		}
	}
}
