package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/urfave/cli/v2"
)

// outputTo is newOutput for a command writing to w, with the given flags
// ("quiet", "no-color", ...) set.
func outputTo(w io.Writer, flags ...string) *output {
	a := &call{}
	for _, name := range flags {
		for _, f := range []*boolFlag{flagQuiet, flagVerbose, flagJSON, flagNoColor} {
			if f.Name == name {
				f.store(&a.flags, "true")
			}
		}
	}
	return newOutput(cli.NewContext(&cli.App{Writer: w, ErrWriter: w}, nil, nil), a)
}

// Colours and the terminal's extras only on a character device, never
// with --no-color or $NO_COLOR.
func TestColourOnlyOnTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	t.Setenv("NO_COLOR", "")
	if o := outputTo(&bytes.Buffer{}); o.tty || o.color {
		t.Errorf("buffer: tty %v, color %v; want neither", o.tty, o.color)
	}
	if o := outputTo(w); o.tty || o.color {
		t.Errorf("pipe: tty %v, color %v; want neither", o.tty, o.color)
	}
	// /dev/null is a character device, as a terminal is.
	if o := outputTo(devnull); !o.tty || !o.color {
		t.Errorf("%s: tty %v, color %v; want both", os.DevNull, o.tty, o.color)
	}
	if o := outputTo(devnull, "no-color"); !o.tty || o.color {
		t.Errorf("--no-color: tty %v, color %v; want tty without colour", o.tty, o.color)
	}
	t.Setenv("NO_COLOR", "1")
	if o := outputTo(devnull); !o.tty || o.color {
		t.Errorf("$NO_COLOR: tty %v, color %v; want tty without colour", o.tty, o.color)
	}
}

// A command whose stdout is a pipe prints no escape codes.
func TestNoEscapesIntoPipe(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/w1.pid", []byte("12345\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	recordNodes(t, dir, "w2")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var errb bytes.Buffer
	code := Run([]string{"multi", "status", "w1", "w2", "--rundir", dir}, w, &errb)
	w.Close()
	out, _ := io.ReadAll(r)
	if code != exitFailed || !strings.HasPrefix(string(out), "w1: stale (") || strings.Contains(string(out), "\033") {
		t.Errorf("status into a pipe: exit %d, %q", code, out)
	}
}

func TestResultLine(t *testing.T) {
	t.Parallel()
	n := nodes.Node{Name: "w1"}
	// The words and their colour follow the Outcome and the fields.
	started := multi.Result{Node: n, Outcome: multi.Started, PID: 42}
	failed := multi.Result{Node: n, Outcome: multi.Failed, Err: &multi.NodeError{Node: "w1", Op: "start", Err: errors.New("boom")}}
	already := multi.Result{Node: n, Outcome: multi.AlreadyRunning, PID: 42}
	down := multi.Result{Node: n, Outcome: multi.NotRunning}
	taken := multi.Result{Node: n, Outcome: multi.NotRunning, HeldBy: 43}
	stale := multi.Result{Node: n, Outcome: multi.StaleRemoved}
	killed := multi.Result{Node: n, Outcome: multi.KilledAfterTimeout, PID: 42, Signal: syscall.SIGTERM, KilledAfter: 2 * time.Second}
	sent := multi.Result{Node: n, Outcome: multi.Signalled, PID: 42, Signal: syscall.SIGHUP}
	stopped := multi.Result{Node: n, Outcome: multi.Stopped, PID: 42, Signal: syscall.SIGTERM, HeldBy: 43}
	lost := multi.Result{Node: n, Outcome: multi.Killed, PID: 42, Signal: syscall.SIGKILL, Lost: true}
	tookOver := multi.Result{Node: n, Outcome: multi.Started, PID: 44, TookOver: true}
	restarted := multi.Result{Node: n, Outcome: multi.Restarted, PID: 44, OldPID: 42}
	shell := multi.Result{Node: n, Outcome: multi.Stopped, PID: 42, Exit: &multi.ExitStatus{Code: -1, Signal: syscall.SIGTERM}}
	tests := []struct {
		r              multi.Result
		failed         bool
		plain, colored string
	}{
		{started, false, "started (pid 42)", green + "started\033[0m (pid 42)"},
		{failed, true, "FAILED: boom", red + "FAILED\033[0m: boom"},
		{already, false, "already running (pid 42)", yellow + "already running (pid 42)\033[0m"},
		{down, false, "not running", yellow + "not running\033[0m"},
		{taken, false, "not running before; now started by someone else (pid 43)", yellow + "not running before; now started by someone else (pid 43)\033[0m"},
		{stale, false, "not running (stale pidfile removed)", yellow + "not running (stale pidfile removed)\033[0m"},
		{sent, false, "sent HUP (pid 42)", green + "sent\033[0m HUP (pid 42)"},
		{stopped, false, "stopped (pid 42); pidfile now held by pid 43", green + "stopped\033[0m (pid 42); pidfile now held by pid 43"},
		{lost, false, "killed (pid 42); it had lost its pidfile's lock", green + "killed\033[0m (pid 42); it had lost its pidfile's lock"},
		{tookOver, false, "took over (pid 44)", green + "took\033[0m over (pid 44)"},
		{restarted, false, "restarted (pid 44)", green + "restarted\033[0m (pid 44)"},
		{shell, false, "stopped from another shell (killed by TERM)", green + "stopped\033[0m from another shell (killed by TERM)"},
		// Stopped, but only by SIGKILL after the timeout: not green.
		{killed, false, "killed after 2s (pid 42)", yellow + "killed\033[0m after 2s (pid 42)"},
	}
	for _, tt := range tests {
		if got := (&output{}).resultLine(tt.r, tt.failed); got != tt.plain {
			t.Errorf("%q: %q; want %q", tt.r, got, tt.plain)
		}
		if got := (&output{color: true}).resultLine(tt.r, tt.failed); got != tt.colored {
			t.Errorf("%q in colour: %q; want %q", tt.r, got, tt.colored)
		}
	}
}

// --quiet prints failures only; a warning always goes to stderr; --verbose
// adds the node's command and files.
func TestResultQuietVerbose(t *testing.T) {
	t.Parallel()
	n := nodes.Node{Name: "w1", PidFile: "/r/w1.pid", LogFile: "/r/w1.log", Command: []string{"sleep", "1"}}
	ok := multi.Result{Node: n, Outcome: multi.Stopped, PID: 42, Signal: syscall.SIGTERM, FilePID: 41}
	bad := multi.Result{Node: n, Err: &multi.NodeError{Node: "w1", Op: "stop", Err: errors.New("boom")}}
	var out, errs bytes.Buffer
	o := &output{w: &out, errw: &errs, quiet: true}
	o.result(ok)
	o.result(bad)
	if out.String() != "w1: FAILED: boom\n" || errs.String() != "w1: warning: pidfile /r/w1.pid says pid 41 but the lock holder is pid 42; using 42\n" {
		t.Errorf("--quiet: %q, %q", out.String(), errs.String())
	}
	out.Reset()
	o = &output{w: &out, errw: &errs, verbose: true}
	o.result(ok)
	if want := "w1: sleep 1  [pidfile /r/w1.pid, logfile /r/w1.log]\nw1: stopped (pid 42)\n"; out.String() != want {
		t.Errorf("--verbose: %q; want %q", out.String(), want)
	}
}

// On a terminal, a count of the nodes done that the per-node lines then
// replace; elsewhere, nothing.
func TestProgress(t *testing.T) {
	t.Parallel()
	cl := &multi.Cluster{Nodes: []nodes.Node{{Name: "w1"}, {Name: "w2"}}}
	var buf bytes.Buffer
	clear := (&output{w: &buf, tty: true}).progress("start", false, cl, &multi.StopOptions{})
	cl.Progress(multi.Result{Node: cl.Nodes[0]})
	cl.Progress(multi.Result{Node: cl.Nodes[1]})
	clear()
	s := buf.String()
	if !strings.Contains(s, "\r\033[Kstart: 2/2 started, ") || !strings.HasSuffix(s, "s\r\033[K") {
		t.Errorf("progress: %q", s)
	}
	for _, o := range []*output{{w: &buf}, {w: &buf, tty: true, quiet: true}, {w: &buf, tty: true, json: true}, {w: &buf, tty: true, dumb: true}} {
		buf.Reset()
		cl.Progress = nil
		var so multi.StopOptions
		o.progress("stop", false, cl, &so)()
		o.progress("stopwait", true, cl, &so)()
		if cl.Progress != nil || so.Signalled != nil || buf.Len() != 0 {
			t.Errorf("%+v: progress set or printed %q", o, buf.String())
		}
	}
}

// stopwait's line says from the first moment what it waits for, naming
// the first node still running and its pid, even for a single node.
func TestProgressWaiting(t *testing.T) {
	t.Parallel()
	cl := &multi.Cluster{Nodes: []nodes.Node{{Name: "w1"}, {Name: "w2"}, {Name: "w3"}}}
	var buf bytes.Buffer
	var so multi.StopOptions
	clear := (&output{w: &buf, tty: true, width: 80}).progress("stopwait", true, cl, &so)
	if s := buf.String(); s != "\r\033[Kstopwait: signalling 3 of 3…" {
		t.Errorf("first moment: %q", s)
	}
	so.Signalled(multi.Result{Node: cl.Nodes[0], PID: 4241})
	so.Signalled(multi.Result{Node: cl.Nodes[1], PID: 4242})
	cl.Progress(multi.Result{Node: cl.Nodes[2]}) // not running
	cl.Progress(multi.Result{Node: cl.Nodes[0]})
	buf.Reset()
	clear()
	if s := buf.String(); s != "\r\033[K" {
		t.Errorf("cleared with %q", s)
	}
	// What the line said last before the clear, by drawing it now.
	p := &progressLine{waits: true, verb: "stopwait", total: 3, done: 2, pending: map[string]pendingNode{
		"w2": {pid: 4242, since: time.Now().Add(-3 * time.Second)}, "w9": {pid: 9, since: time.Now()}}}
	if got, want := p.text(time.Now()), "stopwait: waiting for 2 of 3: w2 (pid 4242) 3s…"; got != want {
		t.Errorf("line %q; want %q", got, want)
	}
	one := &multi.Cluster{Nodes: []nodes.Node{{Name: "w1"}}}
	buf.Reset()
	(&output{w: &buf, tty: true}).progress("stopwait", true, one, &multi.StopOptions{})()
	if !strings.Contains(buf.String(), "stopwait: signalling 1 of 1…") {
		t.Errorf("one node: %q", buf.String())
	}
}

// Colour only on a terminal, and never with --no-color, $NO_COLOR or
// TERM=dumb.
func TestUseColor(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "xterm-256color")
	if !useColor(true, false) || useColor(false, false) || useColor(true, true) {
		t.Errorf("useColor wrong on xterm")
	}
	t.Setenv("TERM", "dumb")
	if useColor(true, false) {
		t.Errorf("colour with TERM=dumb")
	}
	t.Setenv("TERM", "xterm")
	t.Setenv("NO_COLOR", "1")
	if useColor(true, false) {
		t.Errorf("colour with NO_COLOR=1")
	}
}

// A restart's warnings are about the process it stopped (OldPID), not
// the one it started; every warning is on the one line, in order.
func TestWarningsNameTheProcessSignalled(t *testing.T) {
	t.Parallel()
	n := nodes.Node{Name: "w1", PidFile: "/r/w1.pid"}
	r := multi.Result{Node: n, Outcome: multi.Restarted, PID: 44, OldPID: 42, FilePID: -1, KilledAfter: 100 * time.Millisecond,
		RecordErr: errors.New("could not record the node's process: disk full")}
	var out, errs bytes.Buffer
	(&output{w: &out, errw: &errs}).result(r)
	want := "w1: warning: pidfile /r/w1.pid says no valid pid but the lock holder is pid 42; using 42; " +
		"still running after 100ms; sent KILL (pid 42); could not record the node's process: disk full\n"
	if errs.String() != want || out.String() != "w1: restarted (pid 44)\n" {
		t.Errorf("%q, %q; want %q", out.String(), errs.String(), want)
	}
}

// writeCounter counts the writes made to it.
type writeCounter struct {
	bytes.Buffer
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// A verb's result lines go out in one write, however many nodes (a start
// returns as soon as they are ready, not after a write each), and a
// warning, on the other stream, still comes after the lines before it.
func TestResultsOneWriteWarningsInOrder(t *testing.T) {
	var rs []multi.Result
	for i := 1; i <= 100; i++ {
		rs = append(rs, multi.Result{Node: nodes.Node{Name: fmt.Sprintf("w%d", i)}, Outcome: multi.Started, PID: 1000 + i})
	}
	w := &writeCounter{}
	outputTo(w).results(rs)
	if w.writes != 1 {
		t.Errorf("100 result lines in %d writes; want 1", w.writes)
	}
	if n := strings.Count(w.String(), ": started"); n != 100 {
		t.Errorf("%d lines say started; want 100:\n%s", n, w.String())
	}

	// Stdout and stderr on one descriptor, as with 2>&1.
	rs[1].FilePID = 4242
	w = &writeCounter{}
	outputTo(w).results(rs[:3])
	out := w.String()
	first, warn, second := strings.Index(out, "w1: started"), strings.Index(out, "w2: warning"), strings.Index(out, "w2: started")
	if first < 0 || warn < 0 || second < 0 || !(first < warn && warn < second) {
		t.Errorf("want w1's line, then w2's warning, then w2's line:\n%s", out)
	}
}

// One process is "1 process", in every line that counts them.
func TestOneProcess(t *testing.T) {
	t.Parallel()
	o := &output{}
	n := nodes.Node{Name: "w1"}
	if got := o.resultLine(multi.Result{Node: n, Outcome: multi.Killed, Lingering: 1}, false); got != "killed 1 lingering process" {
		t.Errorf("%q", got)
	}
	s := multi.Status{Node: n, State: multi.StateLingering, Tree: multi.Tree{Procs: 1}}
	if got := o.describeStatus(s); !strings.Contains(got, "but 1 process is left in its session") {
		t.Errorf("%q", got)
	}
	if got := s.String(); got != "w1: lingering (1 process)" {
		t.Errorf("%q", got)
	}
}
