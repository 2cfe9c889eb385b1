package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
	"github.com/urfave/cli/v2"
)

// statusJSON is one node in status --json.
type statusJSON struct {
	Name     string `json:"name"`
	FullName string `json:"fullname"`
	State    string `json:"state"`
	PID      int    `json:"pid"`
	FilePID  int    `json:"file_pid"`
	PidFile  string `json:"pidfile"`
	LogFile  string `json:"logfile"`
	Error    string `json:"error,omitempty"`
	// Ready: ready, starting or unready, for a running node with a check.
	Ready      string `json:"ready,omitempty"`
	ReadyError string `json:"ready_error,omitempty"`
	// ReadyStatus: the node's last STATUS= text (--ready=notify).
	ReadyStatus string `json:"ready_status,omitempty"`
	// Fatal: why a live multi run gave up on the node (state fatal).
	Fatal string `json:"fatal,omitempty"`
	// The node's tree: containment, processes, memory and CPU time where
	// its cgroup has them (absent, not zero, where not).
	Containment string `json:"containment"`
	Procs       *int   `json:"procs,omitempty"`
	Memory      *int64 `json:"memory_bytes,omitempty"`
	CPUUsec     *int64 `json:"cpu_usec,omitempty"`
}

func statusCommand() *cli.Command {
	return grammarCommand(&cli.Command{
		Name:      "status",
		Usage:     "show each node's state from its pidfile's lock (exit 0 all running, 1 stale, 3 stopped, 4 lost or unknown)",
		UsageText: "multi status [flags] [NODES...] [--json]",
		Description: `On a terminal, a table: node, state, pid, uptime, pidfile, logfile.
Elsewhere, a line per node. Without NODES, this project's nodes (--all: every recorded one), in
natural order (web2 before web10). --verbose adds each node's command
and working folder (and, in lines, its files). States: running, stopped, stale (a pidfile
nobody holds the lock of), elsewhere (held from another pid namespace),
lost (no lock held, but the node's recorded process, same pid and start
time, still runs: stop it with --lost), stopping (its process let go of
the lock and is exiting), fatal (a live multi run gave up on it: its
--max-restarts), unknown (locked, but not as a node locks it, or
unreadable). With --json,
pid is the lock holder as multi sees it, file_pid what the text says.

   multi status
   multi status w1 w2 --json`,
		Flags: common(flagPidfile, flagLogfile, flagRundir, flagJSON, flagAll, flagStatusReady, flagReadyTimeout.help("a running node failing its check is starting while younger than `DURATION`, then unready", "60s")),
	}, grammar{}, func(c *cli.Context, a *call) (int, error) {
		cl, err := cluster(c, a)
		if err != nil {
			return exitUsage, err
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
			out := make([]statusJSON, len(sts))
			for i, s := range sts {
				word, _ := stateWord(s)
				out[i] = statusJSON{Name: s.Node.Name, FullName: s.Node.FullName(), State: word,
					PID: s.PID, FilePID: s.FilePID, PidFile: s.Node.PidFile, LogFile: s.Node.LogFile, Ready: s.Ready, ReadyStatus: s.ReadyStatus, Fatal: s.Fatal}
				if s.ReadyErr != nil {
					out[i].ReadyError = s.ReadyErr.Error()
				}
				out[i].Containment, out[i].Memory, out[i].CPUUsec = s.Tree.Containment, s.Tree.Memory, s.Tree.CPUUsec
				if s.Tree.Containment == "cgroup" || s.Node.KillMode != "process" {
					out[i].Procs = &s.Tree.Procs
				}
				if s.Err != nil {
					out[i].Error = s.Err.Error()
				} else if s.Lost != nil {
					out[i].PID = s.Lost.PID
				} else if s.Stopping != 0 {
					out[i].PID = s.Stopping
				}
			}
			enc := json.NewEncoder(c.App.Writer)
			enc.SetIndent("", "  ")
			return code, enc.Encode(out)
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
				line := s.Node.Name + ": " + o.describeStatus(s) + o.readyText(s)
				if o.verbose {
					line += fmt.Sprintf("  [%s; pidfile %s, logfile %s]", commandText(s.Node), nodes.Printable(s.Node.PidFile), nodes.Printable(s.Node.LogFile))
				}
				fmt.Fprintln(c.App.Writer, line)
			}
		}
		return code, nil
	})
}

func (o *output) describeStatus(s multi.Status) string {
	switch {
	case s.Err != nil:
		return o.paint(red, "unknown") + ": " + statusErrText(s)
	case s.Lost != nil:
		return o.paint(red, "lost") + fmt.Sprintf(" (pid %d, started %s, runs without its pidfile's lock; stop it with --lost)", s.Lost.PID, s.Lost.Started.Format(time.DateTime))
	case s.Stopping != 0:
		return o.paint(yellow, "stopping") + fmt.Sprintf(" (pid %d let go of its pidfile's lock and is exiting)", s.Stopping)
	case s.Tree.Lingering:
		where := "its cgroup " + nodes.Printable(s.Tree.Cgroup)
		if s.Tree.Cgroup == "" {
			where = "its session"
		}
		return o.paint(red, "lingering") + fmt.Sprintf(" (its lock is free, but %d processes are left in %s; stopwait cleans them)", s.Tree.Procs, where)
	case s.Fatal != "":
		return o.paint(red, "fatal") + " (" + s.Fatal + ")"
	case s.State == pidfile.Running && s.Mismatch():
		return o.paint(green, "running") + fmt.Sprintf(" (pid %d; the pidfile's text disagrees, the lock holder is the truth)", s.PID)
	case s.State == pidfile.Running:
		return o.paint(green, "running") + fmt.Sprintf(" (pid %d)", s.PID)
	case s.State == pidfile.Stale:
		return o.paint(red, "stale") + " (pidfile " + nodes.Printable(s.Node.PidFile) + " left behind; no process holds its lock)"
	case s.State == pidfile.Elsewhere:
		return o.paint(green, "running") + " in another pid namespace (holder not visible from here)"
	}
	return o.paint(yellow, "stopped")
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
		state, color := stateWord(s)
		if s.Ready != "" {
			state = s.Ready // running, and how ready
			if s.Ready != "ready" {
				color = yellow
			}
		}
		if s.Lost != nil {
			s.PID = s.Lost.PID
		}
		pid, uptime := "-", "-"
		if s.PID > 0 {
			pid = strconv.Itoa(s.PID)
			if t, err := proc.StartTime(s.PID); err == nil {
				uptime = time.Since(t).Round(time.Second).String()
			}
		}
		switch {
		case s.Err != nil:
			state += "*"
			notes = append(notes, s.Node.Name+": "+statusErrText(s))
		case s.Lost != nil:
			state += "*"
			notes = append(notes, fmt.Sprintf("%s: pid %d runs without its pidfile's lock; stop it with --lost", s.Node.Name, s.PID))
		case s.Fatal != "":
			state += "*"
			notes = append(notes, s.Node.Name+": "+s.Fatal)
		case s.State == pidfile.Running && s.Mismatch():
			state += "*"
			says := "names no pid"
			if s.FilePID > 0 {
				says = "says " + strconv.Itoa(s.FilePID)
			}
			notes = append(notes, fmt.Sprintf("%s: the pidfile's text %s; the lock holder, pid %d, is the truth", s.Node.Name, says, s.PID))
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
		if s.Err == nil && s.Lost == nil && (s.State == pidfile.Absent || s.State == pidfile.Stale) {
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

// stateWord is the one place a node's state becomes a status word and its
// colour, for the table and --json: running, stopped, stale, elsewhere, lost,
// stopping, or unknown when the pidfile could not be inspected. statusCode beside
// it maps the same states to the exit code; the line mode's sentences
// (describeStatus) say the same in more words.
func stateWord(s multi.Status) (word, color string) {
	switch {
	case s.Err != nil:
		return "unknown", red
	case s.Lost != nil:
		return "lost", red
	case s.Stopping != 0:
		return "stopping", yellow
	case s.Tree.Lingering:
		return "lingering", red
	case s.Fatal != "":
		return "fatal", red
	case s.State == pidfile.Running || s.State == pidfile.Elsewhere:
		return s.State.String(), green
	case s.State == pidfile.Stale:
		return s.State.String(), red
	}
	return s.State.String(), yellow
}

// statusCode maps node states to LSB status codes: the worst one wins.
func statusCode(sts []multi.Status) int {
	code := exitOK
	for _, s := range sts {
		switch {
		case s.Err != nil, s.Lost != nil:
			// A lost node runs, unseen through its lock: unknown.
			return exitUnknown
		case s.Tree.Lingering:
			// Its master gone, its tree left: worse than stale.
			code = exitLingering
		case s.Fatal != "" && code != exitLingering:
			// Given up on: dead, as a stale node is.
			code = exitFailed
		case s.Stopping != 0:
			// On its way out: not running.
			if code == exitOK {
				code = exitStopped
			}
		case s.State == pidfile.Stale && code != exitLingering:
			code = exitFailed
		case s.State == pidfile.Absent && code == exitOK:
			code = exitStopped
		}
	}
	return code
}
