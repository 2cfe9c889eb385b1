package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/urfave/cli/v2"
)

// defaultWatchInterval is how often status --watch looks at its nodes
// when --interval is not given. A look is one Cluster.Status: on 100 idle
// nodes about 15 ms of CPU (each node's pidfile, /proc and cgroup files
// read), so one a second costs under 2% of a CPU, where 200 ms would cost
// five times that for a view a person reads. What is written (a start's
// pidfile and record, a stopwait's removal) wakes the watch besides
// (watchWake), so starts and stops show within watchSettle; the interval
// bounds how late a change nothing writes is seen: a crash, a plain stop,
// a tree's processes.
const defaultWatchInterval = time.Second

// minWatchInterval is the shortest --interval: a shorter one would spend
// a CPU on looking.
const minWatchInterval = 50 * time.Millisecond

// watchSettle is how long a look waits after a wake-up, so that what a
// start or a stop writes in a burst is seen in one look; watchGap the
// least time between two looks however often they are woken (the
// interval, if shorter).
const (
	watchSettle = 25 * time.Millisecond
	watchGap    = 100 * time.Millisecond
)

// A watchKey is what of a node's Status the watch reports the changes
// of: its state (a lock taken or released), its readiness (looked at
// only with --ready), the pid the state is about and the number of
// processes in its tree. A change of anything else (its memory, its CPU
// time) is not news.
type watchKey struct {
	State multi.State
	Ready multi.Readiness
	PID   int
	Procs int
}

func keyOf(s multi.Status) watchKey {
	return watchKey{State: s.State, Ready: s.Ready, PID: s.PID, Procs: s.Tree.Procs}
}

// A watchDiff holds, by node name, the key each node had at the last look.
type watchDiff map[string]watchKey

// changed returns the indexes of the statuses in sts whose key differs
// from their node's at the last look (all of them at the first), and
// remembers the new keys.
func (d watchDiff) changed(sts []multi.Status) []int {
	var out []int
	for i, s := range sts {
		k := keyOf(s)
		if old, seen := d[s.Node.Name]; seen && old == k {
			continue
		}
		d[s.Node.Name] = k
		out = append(out, i)
	}
	return out
}

// A watchView shows the nodes that changed at a look made at now, and
// ends the view when the watch ends.
type watchView interface {
	show(now time.Time, sts []multi.Status, changed []int) error
	end()
}

// watchStatus is status --watch: it looks at cl's nodes every interval
// (and soon after one's pidfile or record is written), and shows each
// node whose state, pid, tree or, with --ready, readiness changed, until
// ctx ends (Ctrl-C: Run then exits 130, as for every verb interrupted).
// It returns the code status would give for the last look.
func watchStatus(ctx context.Context, a *call, cl *multi.Cluster, o *output) (int, error) {
	interval := cmp.Or(a.Interval, defaultWatchInterval)
	// Without --ready no check runs: the nodes looked at have none, and
	// each Status gets its node's check back, for the JSON.
	checks := map[string]nodes.ReadyCheck{}
	cl.Nodes = slices.Clone(cl.Nodes)
	if !a.ReadyOnly {
		for i, n := range cl.Nodes {
			checks[n.Name], cl.Nodes[i].Ready = n.Ready, nodes.ReadyCheck{}
		}
	}
	records := &recordStamps{rundir: cl.RunDir, seen: map[string]os.FileInfo{}}
	look := func() []multi.Status {
		records.refresh(cl.Nodes)
		sts, _ := cl.Status(ctx) // an error is a node's, in its Status
		records.took(cl.Nodes, sts)
		if len(a.Names) == 0 {
			sortNatural(sts)
		} else {
			markUnknown(sts, cl.RunDir)
		}
		if !a.ReadyOnly {
			for i := range sts {
				sts[i].Node.Ready = checks[sts[i].Node.Name]
			}
		}
		return sts
	}
	view := o.watchView(len(cl.Nodes))
	defer view.end()
	wake, stop := watchWake(cl.RunDir, cl.Nodes)
	defer stop()
	gap := min(interval, watchGap)
	timer := time.NewTimer(0)
	defer timer.Stop()
	diff := watchDiff{}
	code := exitOK
	var last time.Time // when the last look began
	next := time.Now() // when the next one is due: the first at once
	for {
		timer.Reset(time.Until(next))
	wait:
		for {
			select {
			case <-ctx.Done():
				return code, nil
			case <-timer.C:
				break wait
			case <-wake:
				// Soon, once what is being written is; but no sooner
				// than gap after the last look.
				soon := time.Now().Add(watchSettle)
				if g := last.Add(gap); soon.Before(g) {
					soon = g
				}
				if soon.Before(next) {
					next = soon
					timer.Reset(time.Until(next))
				}
			}
		}
		last = time.Now()
		next = last.Add(interval)
		sts := look()
		if ctx.Err() != nil {
			return code, nil // the look was cut short: not news
		}
		code = readyCode(a.ReadyOnly, statusCode(sts), sts)
		if changed := diff.changed(sts); len(changed) > 0 {
			if err := view.show(last, sts, changed); err != nil {
				return exitFailed, cli.Exit(fmt.Errorf("multi status: %w", err), exitFailed)
			}
		}
	}
}

// recordStamps keeps the nodes a watch looks at in step with their
// records: the process a node's record names (and its cgroup), against
// which Cluster.Status tells running from mismatch and lost, is the
// record's as it is now, not as it was when the watch began (a node
// started again since is no mismatch). A record is read again only when
// its file changed (another file, size or time): reading it, through
// safefs, costs a look at 100 nodes a quarter more. One whose time is
// within racyRecord of the look is read again at the next look too, as
// git does with racily clean files: a write in the same tick of the
// filesystem's clock leaves the time as it was.
type recordStamps struct {
	rundir string
	seen   map[string]os.FileInfo // by node name; nil: no record
}

// refresh makes each of ns whose record changed since the last look name
// no process and no cgroup, so that Cluster.Status takes them from its
// record ([record.ResolveNode]); the first look reads every record.
func (r *recordStamps) refresh(ns []nodes.Node) {
	for i, n := range ns {
		fi, err := os.Stat(record.Path(r.rundir, n.Name))
		if err != nil {
			fi = nil
		}
		old, seen := r.seen[n.Name]
		same := seen && (old == nil) == (fi == nil) && (fi == nil || os.SameFile(old, fi) && old.Size() == fi.Size() && old.ModTime().Equal(fi.ModTime()))
		if fi != nil && time.Since(fi.ModTime()) < racyRecord {
			delete(r.seen, n.Name) // read at the next look too
		} else {
			r.seen[n.Name] = fi
		}
		if !same {
			ns[i].Recorded, ns[i].Cgroup = nodes.Started{}, ""
		}
	}
}

// racyRecord is how long after its time a record's file may still change
// without its time changing: a filesystem's clock may tick as coarsely as
// every 2 s (FAT; a second on ext3).
const racyRecord = 2 * time.Second

// took keeps in ns what the look sts took from the records, for the next
// looks: sts are of ns, in any order.
func (r *recordStamps) took(ns []nodes.Node, sts []multi.Status) {
	byName := make(map[string]*nodes.Node, len(sts))
	for i := range sts {
		byName[sts[i].Node.Name] = &sts[i].Node
	}
	for i := range ns {
		if n := byName[ns[i].Name]; n != nil {
			ns[i].Recorded, ns[i].Cgroup = n.Recorded, n.Cgroup
		}
	}
}

// watchView picks how the watch shows n nodes: JSON Lines with --json;
// on a terminal (not TERM=dumb, not --quiet) a line per node, redrawn in
// place, when they fit on its screen; else a line per change, with its
// time.
func (o *output) watchView(n int) watchView {
	switch {
	case o.json:
		return &jsonView{w: o.w}
	case o.tty && !o.dumb && !o.quiet && n < cmp.Or(termRows(o.w), 24):
		return &termView{o: o}
	}
	return &lineView{o: o, last: map[string]string{}}
}

// watchLine is a node's line in a watch: status's, and the processes of
// its tree when there are more than the node's own (status's line says
// nothing of them, and they are news).
func (o *output) watchLine(s multi.Status) string {
	extra := ""
	if s.Tree.Procs > 1 && s.State != multi.StateLingering {
		extra = ", " + processes(s.Tree.Procs)
	}
	return o.statusLine(s, extra)
}

// A jsonView writes, for each node that changed, a line of JSON:
// {"time": ..., "status": ...}, its Status in README's schema.
type jsonView struct{ w io.Writer }

// watchEvent is a line of status --watch --json.
type watchEvent struct {
	Time   string       `json:"time"`
	Status multi.Status `json:"status"`
}

func (v *jsonView) end() {}

func (v *jsonView) show(now time.Time, sts []multi.Status, changed []int) error {
	var b bytes.Buffer
	t := now.UTC().Format(time.RFC3339Nano)
	for _, i := range changed {
		line, err := json.Marshal(watchEvent{Time: t, Status: sts[i]})
		if err != nil {
			return fmt.Errorf("%s: %w", sts[i].Node.Name, err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	_, err := v.w.Write(b.Bytes())
	return err
}

// A lineView writes, for each node that changed, its line after the time
// of the look (RFC 3339, UTC); not a line the same as its last one (a
// change its words do not show), nor with --quiet one without an error.
type lineView struct {
	o    *output
	last map[string]string // by node name, its line last written
}

func (v *lineView) end() {}

func (v *lineView) show(now time.Time, sts []multi.Status, changed []int) error {
	var b strings.Builder
	t := now.UTC().Format(time.RFC3339)
	for _, i := range changed {
		s := sts[i]
		line := v.o.watchLine(s)
		if v.last[s.Node.Name] == line || v.o.quiet && s.Err == nil {
			continue
		}
		v.last[s.Node.Name] = line
		b.WriteString(t + " " + line + "\n")
	}
	if b.Len() == 0 {
		return nil
	}
	_, err := io.WriteString(v.o.w, b.String())
	return err
}

// A termView keeps a line per node on a terminal, each cut to its width,
// and redraws them in place when one changed: up to the first line, each
// line cleared and written again.
type termView struct {
	o     *output
	lines []string // as drawn; nil before the first draw
}

func (v *termView) show(_ time.Time, sts []multi.Status, _ []int) error {
	width := cmp.Or(termWidth(v.o.w), 80)
	lines := make([]string, len(sts))
	for i, s := range sts {
		lines[i] = cutVisible(v.o.watchLine(s), width-1)
	}
	if slices.Equal(lines, v.lines) {
		return nil
	}
	var b strings.Builder
	if len(v.lines) > 0 {
		fmt.Fprintf(&b, "\033[%dA", len(v.lines))
	}
	for _, l := range lines {
		b.WriteString("\r\033[K" + l + "\n")
	}
	v.lines = lines
	_, err := io.WriteString(v.o.w, b.String())
	return err
}

// end clears the line under the nodes' lines, where the terminal
// echoed Ctrl-C ("^C"), so that the shell's prompt comes on a clean one.
func (v *termView) end() {
	if v.lines != nil {
		io.WriteString(v.o.w, "\r\033[K")
	}
}

// cutVisible cuts s to at most w characters shown, ending it with an
// ellipsis when cut; escape sequences (ESC [ ... m, a colour) take no
// room and are kept, and a cut line that had any ends with a reset.
func cutVisible(s string, w int) string {
	if w < 1 {
		return ""
	}
	shown, cut := 0, 0
	for i := 0; i < len(s); {
		if s[i] == '\033' && i+1 < len(s) && s[i+1] == '[' {
			i += 2
			for i < len(s) && (s[i] < 0x40 || s[i] > 0x7e) {
				i++ // parameters, up to the final byte
			}
			i++
			continue
		}
		if shown == w-1 {
			cut = i // where the last character that fits with "…" ends
		}
		if shown == w {
			end := s[:cut] + "…"
			if strings.Contains(end, "\033[") {
				end += "\033[0m"
			}
			return end
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		shown++
		i += size
	}
	return s
}
