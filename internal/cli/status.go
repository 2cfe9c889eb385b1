package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/urfave/cli/v2"
)

func statusCommand() *cli.Command {
	return grammarCommand(&cli.Command{
		Name:      "status",
		Usage:     "show each node's state from its pidfile's lock (exit 0 all running, 1 stale or fatal, 3 stopped, 4 lost, mismatch or unknown, 150 lingering)",
		UsageText: "multi status [flags] [NODES...] [--json] [--watch [--interval=DURATION]]",
		Description: `On a terminal, a table: node, state, pid, uptime, pidfile, logfile.
Elsewhere, a line per node. Without NODES, this project's nodes (--all: every recorded one), in
natural order (web2 before web10). --verbose adds each node's command
and working folder (and, in lines, its files). States: running, stopped, stale (a pidfile
nobody holds the lock of), elsewhere (held from another pid namespace),
lost (no lock held, but the node's recorded process, same pid and start
time, still runs: stop it with --lost), mismatch (its pidfile is held by
another process than its record names; --lost reaches the recorded one),
stopping (its process let go of
the lock and is exiting), lingering (no lock held, but processes of its
tree are left: stopwait cleans them), fatal (a live multi run gave up on
it: its --max-restarts), unknown (locked, but not as a node locks it, or
unreadable). The exit code is the worst node's. With --json, each node's
Status in README's JSON schema: pid is the process the state is about
(the lock holder as multi sees it), file_pid what the pidfile's text says.

--watch stays until Ctrl-C (exit 130, as any verb interrupted) and shows
each node again when its state, pid or number of processes changed (with
--ready, its readiness too; checks run only then): on a terminal a line
per node, redrawn in place; elsewhere a line per change, after its time
(RFC 3339, UTC); with --json a JSON object per line per change, {"time":
..., "status": ...}, the Status as --json writes it. It looks every
--interval (1s), and at once when a pidfile or record is made, replaced
or removed (Linux).

   multi status
   multi status w1 w2 --json
   multi status --watch
   multi status --watch --json --interval=200ms | jq -c .status.state`,
		Flags: common(flagPidfile, flagLogfile, flagRundir, flagJSON, flagAll, flagStatusReady, flagReadyTimeout.help("a running node failing its check is starting while younger than `DURATION`, then unready", "60s"), flagWatch, flagInterval),
	}, grammar{project: true}, func(c *cli.Context, a *call) (int, error) {
		if a.given["interval"] && !a.Watch {
			return exitUsage, usage(c, errors.New("--interval goes with --watch"))
		}
		cl, err := cluster(c, a)
		if err != nil {
			return exitUsage, err
		}
		if a.Watch {
			return watchStatus(c.Context, a, cl, newOutput(c, a))
		}
		sts, _ := cl.Status(c.Context)
		if len(a.Names) == 0 {
			sortNatural(sts) // the records, in a person's order
		} else {
			markUnknown(sts, cl.RunDir)
		}
		code := readyCode(a.ReadyOnly, statusCode(sts), sts)
		o := newOutput(c, a)
		switch {
		case o.json:
			// The library's schema, as README documents it.
			enc := json.NewEncoder(c.App.Writer)
			enc.SetIndent("", "  ")
			return code, enc.Encode(sts)
		case o.quiet:
			for _, s := range sts {
				if s.Err != nil {
					fmt.Fprintln(c.App.Writer, s.Node.Name+": "+o.describeStatus(s))
				}
			}
		case o.tty:
			o.statusTable(sts, cl.RunDir)
			if len(a.Names) == 0 {
				if hint := forgetHint(sts, o.width); hint != "" {
					fmt.Fprintln(c.App.Writer, hint)
				}
			}
		default:
			for _, s := range sts {
				fmt.Fprintln(c.App.Writer, o.statusLine(s, ""))
			}
		}
		return code, nil
	})
}

// statusLine is a node's line as status prints it off a terminal
// ("w1: running (pid 123)"), extra after its state (the words before its
// readiness), with --verbose its command and files.
func (o *output) statusLine(s multi.Status, extra string) string {
	line := s.Node.Name + ": " + o.describeStatus(s) + extra + o.readyText(s)
	if o.verbose {
		line += fmt.Sprintf("  [%s; pidfile %s, logfile %s]", commandText(s.Node), nodes.Printable(s.Node.PidFile), nodes.Printable(s.Node.LogFile))
	}
	return line
}

func (o *output) describeStatus(s multi.Status) string {
	word := o.paint(stateColors[s.State], string(s.State))
	switch s.State {
	case multi.StateUnknown, multi.StateMismatch:
		return word + ": " + statusErrText(s)
	case multi.StateLost:
		return word + fmt.Sprintf(" (pid %d, started %s, runs without its pidfile's lock; stop it with --lost)", s.PID, s.Started.Format(time.DateTime))
	case multi.StateStopping:
		return word + fmt.Sprintf(" (pid %d let go of its pidfile's lock and is exiting)", s.PID)
	case multi.StateLingering:
		where := "its cgroup " + nodes.Printable(s.Tree.Cgroup)
		if s.Tree.Cgroup == "" {
			where = "its session"
		}
		return word + fmt.Sprintf(" (its lock is free, but %s left in %s; stopwait cleans them)", processesAre(s.Tree.Procs), where)
	case multi.StateFatal:
		return word + " (" + s.Fatal + ")"
	case multi.StateRunning:
		if s.Mismatch() {
			return word + fmt.Sprintf(" (pid %d; the pidfile's text disagrees, the lock holder is the truth)", s.PID)
		}
		if hits := limitHits(s.Tree); hits != "" {
			return word + fmt.Sprintf(" (pid %d; %s)", s.PID, hits)
		}
		return word + fmt.Sprintf(" (pid %d)", s.PID)
	case multi.StateStale:
		return word + " (pidfile " + nodes.Printable(s.Node.PidFile) + " left behind; no process holds its lock)"
	case multi.StateElsewhere:
		return o.paint(green, "running") + " in another pid namespace (holder not visible from here)"
	}
	return word
}

// limitHits says what a node's tree ran into since it started: "2 OOM
// kills, memory.max reached 5 times"; "" for nothing.
func limitHits(t multi.Tree) string {
	var parts []string
	if t.OOMKills != nil && *t.OOMKills > 0 {
		parts = append(parts, plural(*t.OOMKills, "OOM kill"))
	}
	for _, l := range []string{"memory.max", "memory.high", "pids.max"} {
		if v := t.LimitHits[l]; v > 0 {
			parts = append(parts, l+" reached "+plural(v, "time"))
		}
	}
	if v := t.LimitHits["cpu.max"]; v > 0 {
		parts = append(parts, "cpu.max throttled "+plural(v, "period"))
	}
	return strings.Join(parts, ", ")
}

// plural is "1 thing", "2 things".
func plural(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.FormatInt(n, 10) + " " + thing + "s"
}

// processes is "1 process" or "N processes".
func processes(n int) string {
	if n == 1 {
		return "1 process"
	}
	return strconv.Itoa(n) + " processes"
}

// processesAre is "1 process is" or "N processes are".
func processesAre(n int) string {
	if n == 1 {
		return "1 process is"
	}
	return processes(n) + " are"
}

// statusTable prints the aligned table status shows on a terminal, no
// wider than o.width (80 if unknown): files inside rundir are shown
// relative to it, and paths still too long lose their middle. A note
// under the table says what a state's word cannot: a pidfile whose text
// disagrees with its lock holder, a lost node, why a node is unknown.
func (o *output) statusTable(sts []multi.Status, rundir string) {
	width := o.width
	if width <= 0 {
		width = 80
	}
	rows := [][]string{{"NODE", "STATE", "PID", "UPTIME", "PIDFILE", "LOGFILE"}}
	colors := []string{""}
	var notes, statusNotes []string
	relative := false
	short := func(path string) string {
		if rel, err := filepath.Rel(rundir, path); err == nil && rundir != "" && !strings.HasPrefix(rel, "..") {
			relative = true
			return nodes.Printable(rel)
		}
		return nodes.Printable(path)
	}
	for _, s := range sts {
		state, color := string(s.State), stateColors[s.State]
		if s.Ready != "" {
			state = string(s.Ready) // running, and how ready
			if s.Ready != multi.Ready {
				color = yellow
			}
		}
		pid, uptime := "-", "-"
		if s.PID > 0 {
			pid = strconv.Itoa(s.PID)
		}
		if !s.Started.IsZero() {
			uptime = time.Since(s.Started).Round(time.Second).String()
		}
		switch {
		case s.State == multi.StateUnknown || s.State == multi.StateMismatch:
			state += "*"
			notes = append(notes, s.Node.Name+": "+statusErrText(s))
		case s.State == multi.StateLost:
			state += "*"
			notes = append(notes, fmt.Sprintf("%s: pid %d runs without its pidfile's lock; stop it with --lost", s.Node.Name, s.PID))
		case s.State == multi.StateFatal:
			state += "*"
			notes = append(notes, s.Node.Name+": "+s.Fatal)
		case s.Mismatch():
			state += "*"
			says := "names no pid"
			if s.FilePID > 0 {
				says = "says " + strconv.Itoa(s.FilePID)
			}
			notes = append(notes, fmt.Sprintf("%s: the pidfile's text %s; the lock holder, pid %d, is the truth", s.Node.Name, says, s.PID))
		}
		if hits := limitHits(s.Tree); hits != "" && s.State == multi.StateRunning {
			statusNotes = append(statusNotes, s.Node.Name+": "+hits)
		}
		if s.ReadyStatus != "" && s.Ready != "" {
			statusNotes = append(statusNotes, s.Node.Name+": STATUS="+nodes.Printable(s.ReadyStatus))
		}
		rows = append(rows, []string{s.Node.Name, state, pid, uptime, short(s.Node.PidFile), short(s.Node.LogFile)})
		colors = append(colors, color)
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, cell := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	shrink(widths, width)
	if relative {
		fmt.Fprintln(o.w, "files in "+elide(nodes.Printable(rundir), width-len("files in ")))
	}
	for r, row := range rows {
		var b strings.Builder
		for i, cell := range row {
			cell = elide(cell, widths[i])
			pad := widths[i] - utf8.RuneCountInString(cell)
			if i == 1 && r > 0 {
				cell = o.paint(colors[r], cell)
			}
			b.WriteString(cell)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", pad+gap))
			}
		}
		fmt.Fprintln(o.w, b.String())
	}
	for _, n := range notes {
		fmt.Fprint(o.w, wrap("* "+n, width, "  "))
	}
	for _, n := range statusNotes {
		fmt.Fprint(o.w, wrap(n, width, "    "))
	}
	if o.verbose {
		// What the table has no room for: each node's command.
		for _, s := range sts {
			fmt.Fprint(o.w, wrap(s.Node.Name+": "+commandText(s.Node), width, "    "))
		}
	}
}

// commandText is a node's command line, shell-quoted, and the folder it
// runs in when one was recorded.
func commandText(n nodes.Node) string {
	if len(n.Command) == 0 {
		return "(no command)"
	}
	text := nodes.Quote(n.Command)
	if n.Dir != "" {
		text += " (in " + nodes.Printable(n.Dir) + ")"
	}
	return text
}

// wrap breaks s into lines of at most width characters at spaces, each
// line after the first starting with indent.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > width {
			b.WriteString(line + "\n")
			line = indent + word
			continue
		}
		if line != "" && line != indent {
			line += " "
		}
		line += word
	}
	return b.String() + line + "\n"
}

// forgetHint is the line status prints under its table, when the nodes
// came from the records, naming the stopped ones and how to forget them.
func forgetHint(sts []multi.Status, width int) string {
	var names []string
	for _, s := range sts {
		if s.State == multi.StateStopped || s.State == multi.StateStale || s.State == multi.StateFatal {
			names = append(names, s.Node.Name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	line := "stopped nodes keep their records; to forget them: multi forget " + strings.Join(names, " ")
	if width <= 0 {
		width = 80
	}
	if len(line) > width {
		line = fmt.Sprintf("%d stopped nodes keep their records; to forget one: multi forget NAME...", len(names))
	}
	return line
}

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

// elide shortens s to w characters by cutting out its middle, keeping the
// end, where a path's file name is.
func elide(s string, w int) string {
	r := []rune(s)
	if len(r) <= w || w < 5 {
		return s
	}
	head := (w - 1) / 3
	return string(r[:head]) + "…" + string(r[len(r)-(w-1-head):])
}

// stateColors are the states' colours in the table and the lines.
var stateColors = map[multi.State]string{
	multi.StateUnknown: red, multi.StateLost: red, multi.StateMismatch: red, multi.StateStopping: yellow, multi.StateLingering: red,
	multi.StateFatal: red, multi.StateRunning: green, multi.StateElsewhere: green, multi.StateStale: red,
	multi.StateStopped: yellow,
}

// stateCodes are the LSB status codes of the states (see statusCode).
var stateCodes = map[multi.State]int{
	// A lost node runs, unseen through its lock: unknown.
	multi.StateUnknown: exitUnknown, multi.StateLost: exitUnknown, multi.StateMismatch: exitUnknown,
	// Its master gone, its tree left: worse than stale.
	multi.StateLingering: exitLingering,
	// Given up on: dead, as a stale node is.
	multi.StateFatal: exitFailed, multi.StateStale: exitFailed,
	// On its way out: not running.
	multi.StateStopping: exitStopped, multi.StateStopped: exitStopped,
	multi.StateRunning: exitOK, multi.StateElsewhere: exitOK,
}

// codeRank orders the codes, worst last: the worst node decides.
var codeRank = map[int]int{exitOK: 0, exitStopped: 1, exitFailed: 2, exitLingering: 3, exitUnknown: 4}

// statusCode maps node states to LSB status codes: the worst one wins.
func statusCode(sts []multi.Status) int {
	code := exitOK
	for _, s := range sts {
		if c := stateCodes[s.State]; codeRank[c] > codeRank[code] {
			code = c
		}
	}
	return code
}
