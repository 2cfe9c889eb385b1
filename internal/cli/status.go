package cli

import (
	"encoding/json"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
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
}

func statusCommand(code *int) *cli.Command {
	return grammarCommand(&cli.Command{
		Name:      "status",
		Usage:     "show each node's state from its pidfile's lock (exit 0 all running, 1 stale, 3 stopped, 4 lost or unknown)",
		UsageText: "multi status [flags] [NODES...] [--json]",
		Description: `On a terminal, a table: node, state, pid, uptime, pidfile, logfile.
Elsewhere, a line per node. States: running, stopped, stale (a pidfile
nobody holds the lock of), elsewhere (held from another pid namespace),
lost (no lock held, but the node's recorded process, same pid and start
time, still runs: stop it with --lost), unknown (locked, but not as a node
locks it, or unreadable). With --json,
pid is the lock holder as multi sees it, file_pid what the text says.

   multi status
   multi status w1 w2 --json`,
		Flags: common(flagPidfile, flagLogfile, flagRundir, flagJSON),
	}, false, func(c *cli.Context, a *Args) error {
		cl, err := cluster(c, a)
		if err != nil {
			return err
		}
		sts, _ := cl.Status(c.Context)
		*code = statusCode(sts)
		o := newOutput(c, a)
		switch {
		case o.json:
			out := make([]statusJSON, len(sts))
			for i, s := range sts {
				word, _ := stateWord(s)
				out[i] = statusJSON{Name: s.Node.Name, FullName: s.Node.FullName(), State: word,
					PID: s.PID, FilePID: s.FilePID, PidFile: s.Node.PidFile, LogFile: s.Node.LogFile}
				if s.Err != nil {
					out[i].Error = s.Err.Error()
				} else if s.Lost != nil {
					out[i].PID = s.Lost.PID
				}
			}
			enc := json.NewEncoder(c.App.Writer)
			enc.SetIndent("", "  ")
			return enc.Encode(out)
		case o.quiet:
			for _, s := range sts {
				if s.Err != nil {
					fmt.Fprintln(c.App.Writer, s.Node.Name+": "+o.describeStatus(s))
				}
			}
		case o.tty:
			o.statusTable(sts)
		default:
			for _, s := range sts {
				fmt.Fprintln(c.App.Writer, s.Node.Name+": "+o.describeStatus(s))
			}
		}
		return nil
	})
}

func (o *output) describeStatus(s multi.Status) string {
	switch {
	case s.Err != nil:
		return o.paint(red, "unknown") + ": " + statusErrText(s)
	case s.Lost != nil:
		return o.paint(red, "lost") + fmt.Sprintf(" (pid %d, started %s, runs without its pidfile's lock; stop it with --lost)", s.Lost.PID, s.Lost.Started.Format(time.DateTime))
	case s.State == nodes.Running && s.Mismatch():
		return o.paint(green, "running") + fmt.Sprintf(" (pid %d; the pidfile's text disagrees, the lock holder is the truth)", s.PID)
	case s.State == nodes.Running:
		return o.paint(green, "running") + fmt.Sprintf(" (pid %d)", s.PID)
	case s.State == nodes.Stale:
		return o.paint(red, "stale") + " (pidfile " + s.Node.PidFile + " left behind; no process holds its lock)"
	case s.State == nodes.Elsewhere:
		return o.paint(green, "running") + " in another pid namespace (holder not visible from here)"
	}
	return o.paint(yellow, "stopped")
}

// statusTable prints the aligned table status shows on a terminal.
func (o *output) statusTable(sts []multi.Status) {
	tw := tabwriter.NewWriter(o.w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tSTATE\tPID\tUPTIME\tPIDFILE\tLOGFILE")
	for _, s := range sts {
		state, color := stateWord(s)
		if s.Lost != nil {
			s.PID = s.Lost.PID
		}
		pid, uptime := "-", "-"
		if s.PID > 0 {
			pid = strconv.Itoa(s.PID)
			if t, err := nodes.ProcessStart(s.PID); err == nil {
				uptime = time.Since(t).Round(time.Second).String()
			}
		}
		// tabwriter counts colour codes as width, but every state carries
		// the same codes, so the column stays aligned.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Node.Name, o.paint(color, state), pid, uptime, s.Node.PidFile, s.Node.LogFile)
	}
	tw.Flush()
}

// stateWord is the one place a node's state becomes a status word and its
// colour, for the table and --json: running, stopped, stale, elsewhere, lost,
// or unknown when the pidfile could not be inspected. statusCode beside
// it maps the same states to the exit code; the line mode's sentences
// (describeStatus) say the same in more words.
func stateWord(s multi.Status) (word, color string) {
	switch {
	case s.Err != nil:
		return "unknown", red
	case s.Lost != nil:
		return "lost", red
	case s.State == nodes.Running || s.State == nodes.Elsewhere:
		return s.State.String(), green
	case s.State == nodes.Stale:
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
		case s.State == nodes.Stale:
			code = exitFailed
		case s.State == nodes.Absent && code == exitOK:
			code = exitStopped
		}
	}
	return code
}
