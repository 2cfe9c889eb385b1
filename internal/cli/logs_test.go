package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
)

func TestLogs(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "w1.log"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "logs", "w1", "--rundir", dir)
	if code != exitOK || out != "one\ntwo\n" || errs != "" {
		t.Errorf("logs w1: exit %d, %q, %q", code, out, errs)
	}
	code, out, errs = runCLI(t, "logs", "w2", "--rundir", dir)
	if code != exitFailed || out != "" || errs != "w2: FAILED: logfile "+filepath.Join(dir, "w2.log")+": no such file or directory\n" {
		t.Errorf("logs w2 (no log): exit %d, %q, %q", code, out, errs)
	}
}

// logs prints the last 10 lines by default, as tail, -n N the last N (a
// last line without its newline counts), -n all the whole file; of
// several nodes, or of every recorded node when none is named, each line
// goes with its node's name, as multi run prints them, node after node.
func TestLogsLinesAndNodes(t *testing.T) {
	dir := t.TempDir()
	var w1 strings.Builder
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&w1, "line %d\n", i)
	}
	files := map[string]string{"w1": w1.String(), "w2": "a\nb\nno newline"}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name+".log"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"w1"}, strings.Join(strings.SplitAfter(w1.String(), "\n")[2:], "")},
		{[]string{"w1", "-n", "2"}, "line 11\nline 12\n"},
		{[]string{"w1", "--lines=0"}, ""},
		{[]string{"w1", "-n", "all"}, w1.String()},
		{[]string{"w2", "-n", "2"}, "b\nno newline"},
		{[]string{"w1", "w2", "-n", "2"}, "w1 | line 11\nw1 | line 12\nw2 | b\nw2 | no newline\n"},
	} {
		code, out, errs := runCLI(t, append(append([]string{"logs", "--rundir", dir}, c.args...), "--no-color")...)
		if code != exitOK || out != c.want || errs != "" {
			t.Errorf("logs %q: exit %d, %q, %q; want 0, %q", c.args, code, out, errs, c.want)
		}
	}
	code, out, errs := runCLI(t, "logs", "--rundir", dir, "w1", "-n", "-3")
	if code != exitUsage || out != "" || !strings.Contains(errs, `--lines is a number of lines (0 or more) or all, not "-3"`) {
		t.Errorf("logs -n -3: exit %d, %q, %q; want a usage error", code, out, errs)
	}

	// No names: every recorded node.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	ns, err := nodes.Spec{Names: []string{"w1", "w2"}, RunDir: dir, Dir: wd, Command: []string{"sleep", "1"}}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		if err := record.Write(dir, n); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs = runCLI(t, "logs", "--rundir", dir, "-n", "1")
	if want := "w1 | line 12\nw2 | no newline\n"; code != exitOK || out != want || errs != "" {
		t.Errorf("logs -n 1 (no names): exit %d, %q, %q; want 0, %q", code, out, errs, want)
	}
}

// The prefix of each node's lines is coloured only when asked: on a
// terminal, and then one colour per node.
func TestLogPrefix(t *testing.T) {
	if got := string(logPrefix("w1", 0, false)); got != "w1 | " {
		t.Errorf("plain prefix %q", got)
	}
	a, b := string(logPrefix("w1", 0, true)), string(logPrefix("w2", 1, true))
	if !strings.Contains(a, "w1 |") || !strings.HasPrefix(a, "\033[") || a[:5] == b[:5] {
		t.Errorf("coloured prefixes %q, %q; want w1's painted, in a colour w2's is not", a, b)
	}
}

func TestLastLines(t *testing.T) {
	for _, c := range []struct {
		text string
		n    int
		want int64
	}{
		{"", 3, 0},
		{"a\nb\nc\n", 2, 2},
		{"a\nb\nc\n", 1, 4},
		{"a\nb\nc\n", 3, 0},
		{"a\nb\nc\n", 9, 0},
		{"a\nb\nc\n", 0, 6},
		{"a\nb\nc\n", -1, 0},
		{"a\nb", 1, 2},
		{"a\n\n\n", 2, 2},
		{strings.Repeat("x", 200<<10) + "\ny\n", 1, 200<<10 + 1}, // across reads
	} {
		got, err := lastLines(strings.NewReader(c.text), int64(len(c.text)), c.n)
		if err != nil || got != c.want {
			t.Errorf("lastLines(%.20q, %d) = %d, %v; want %d", c.text, c.n, got, err, c.want)
		}
	}
}

// syncBuffer is a bytes.Buffer that the follower writes while the test
// reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// follow starts a follower of the logs at paths (named by their base
// names) printing their last n lines, and returns what it printed so far
// and a stop that cancels it and checks it ended.
func follow(t *testing.T, n int, paths ...string) (*syncBuffer, func(want string)) {
	t.Helper()
	var logs []*logSource
	for _, p := range paths {
		l, err := openLog(filepath.Base(p), p)
		if err != nil {
			t.Fatal(err)
		}
		if len(paths) > 1 {
			l.prefix = logPrefix(l.name, 0, false)
		}
		logs = append(logs, l)
	}
	out := &syncBuffer{}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- printLogs(ctx, out, logs, n, true, func(name string, err error) { t.Errorf("%s: %v", name, err) })
	}()
	stop := func(want string) {
		t.Helper()
		waitOutput(t, out, want)
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("printLogs after cancel: %v", err)
		}
		for _, l := range logs {
			l.f.Close()
		}
	}
	t.Cleanup(func() { cancel() })
	return out, stop
}

// waitOutput waits, up to a deadline, until out holds want.
func waitOutput(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); out.String() != want; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("followed %.300q; want %.300q", out.String(), want)
		}
	}
}

func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// -f starts after the last lines, not at the file's start, prints what is
// appended, and starts over after a truncation (copytruncate).
func TestFollowLogTruncated(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "w1.log")
	var old strings.Builder
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&old, "old %d\n", i)
	}
	if err := os.WriteFile(path, []byte(old.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stop := follow(t, 2, path)
	want := "old 998\nold 999\n"
	waitOutput(t, out, want)
	appendTo(t, path, "b\n")
	want += "b\n"
	waitOutput(t, out, want)
	// As logrotate's copytruncate: the file emptied, the node appending
	// from its start.
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	appendTo(t, path, "c\n")
	want += "c\n"
	stop(want)
}

// -f follows a rotation as logrotate's create does it: the file renamed
// (what is still written to it is printed) and a new one made at its
// name, printed from its start; a node's lines keep their prefix, and a
// line cut by the rotation is ended.
func TestFollowLogRotated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w1, w2 := filepath.Join(dir, "w1"), filepath.Join(dir, "w2")
	for _, p := range []string{w1, w2} {
		if err := os.WriteFile(p, []byte("start\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, stop := follow(t, 1, w1, w2)
	want := "w1 | start\nw2 | start\n"
	waitOutput(t, out, want)
	if err := os.Rename(w1, w1+".1"); err != nil {
		t.Fatal(err)
	}
	// The node still writes to the renamed file until it reopens its log.
	appendTo(t, w1+".1", "late\nhalf")
	want += "w1 | late\n"
	waitOutput(t, out, want)
	appendTo(t, w1, "new\n")
	// Files are followed each on its own, so w2's line waits until w1's
	// rotation has shown: the order asserted is then the only one possible.
	want += "w1 | half\nw1 | new\n"
	waitOutput(t, out, want)
	appendTo(t, w2, "two\n")
	want += "w2 | two\n"
	stop(want)
}

// --timestamps and --log-format=json: the last lines, read from a file
// that keeps no times, have none; each line -f follows has the time it
// was read, RFC 3339 in UTC with microseconds; JSON gives node, stream
// "output" and line, one object per line, a held-back line too.
func TestFollowLogStampedAndJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "w1.log")
	if err := os.WriteFile(path, []byte("old \"quoted\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(stamp, asJSON bool) (*syncBuffer, context.CancelFunc, chan error) {
		l, err := openLog("w1", path)
		if err != nil {
			t.Fatal(err)
		}
		l.stamp, l.json = stamp, asJSON
		out := &syncBuffer{}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			done <- printLogs(ctx, out, []*logSource{l}, 5, true, func(name string, err error) { t.Errorf("%s: %v", name, err) })
		}()
		return out, cancel, done
	}
	text, stopText, textDone := run(true, false)
	js, stopJSON, jsonDone := run(false, true)
	waitOutput(t, text, "old \"quoted\"\n")
	waitOutput(t, js, `{"node":"w1","stream":"output","line":"old \"quoted\""}`+"\n")
	appendTo(t, path, "new\nhalf")
	stamp := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z`
	waitMatch := func(out *syncBuffer, re string) {
		t.Helper()
		r := regexp.MustCompile("^" + re + "$")
		for deadline := time.Now().Add(10 * time.Second); !r.MatchString(out.String()); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("followed %q; want it to match %s", out.String(), re)
			}
		}
	}
	waitMatch(text, `old "quoted"\n`+stamp+` new\n`)
	waitMatch(js, `\{"node":"w1","stream":"output","line":"old \\"quoted\\""\}\n\{"time":"`+stamp+`","node":"w1","stream":"output","line":"new"\}\n`)
	// Ctrl-C: the line not ended yet is printed, ended.
	stopText()
	stopJSON()
	<-textDone
	<-jsonDone
	if !strings.HasSuffix(text.String(), " half\n") || !strings.HasSuffix(js.String(), `"line":"half"}`+"\n") {
		t.Errorf("the held-back line at the end:\n%s\n%s", text.String(), js.String())
	}
}
