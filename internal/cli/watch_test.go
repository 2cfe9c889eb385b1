package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
)

// st is a status of the node name for the watch's tests.
func st(name string, state multi.State, pid, procs int) multi.Status {
	return multi.Status{Node: nodes.Node{Name: name}, State: state, PID: pid, FilePID: pid, Tree: multi.Tree{Procs: procs}}
}

// A watch reports a node when its state, pid, readiness or number of
// processes changed, every node at the first look, and nothing else:
// not its memory, its CPU time, nor a node that did not change.
func TestWatchDiff(t *testing.T) {
	mem := int64(1 << 20)
	d := watchDiff{}
	first := []multi.Status{st("w1", multi.StateRunning, 10, 1), st("w2", multi.StateStopped, 0, 0)}
	steps := []struct {
		what string
		sts  func() []multi.Status
		want []int
	}{
		{"the first look", func() []multi.Status { return first }, []int{0, 1}},
		{"the same again", func() []multi.Status { return first }, nil},
		{"memory and CPU time", func() []multi.Status {
			s := slices.Clone(first)
			s[0].Tree.Memory, s[0].Tree.CPUUsec = &mem, &mem
			s[0].Started = time.Now()
			return s
		}, nil},
		{"w2 started", func() []multi.Status {
			return []multi.Status{st("w1", multi.StateRunning, 10, 1), st("w2", multi.StateRunning, 20, 1)}
		}, []int{1}},
		{"w1's tree grew", func() []multi.Status {
			return []multi.Status{st("w1", multi.StateRunning, 10, 3), st("w2", multi.StateRunning, 20, 1)}
		}, []int{0}},
		{"w2 became ready", func() []multi.Status {
			s := []multi.Status{st("w1", multi.StateRunning, 10, 3), st("w2", multi.StateRunning, 20, 1)}
			s[1].Ready = multi.Ready
			return s
		}, []int{1}},
		{"the order of the nodes", func() []multi.Status {
			s := []multi.Status{st("w2", multi.StateRunning, 20, 1), st("w1", multi.StateRunning, 10, 3)}
			s[0].Ready = multi.Ready
			return s
		}, nil},
		{"w1 replaced by another pid, w2 stopping", func() []multi.Status {
			s := []multi.Status{st("w1", multi.StateRunning, 11, 3), st("w2", multi.StateStopping, 20, 1)}
			return s
		}, []int{0, 1}},
		{"w3, new", func() []multi.Status {
			return []multi.Status{st("w1", multi.StateRunning, 11, 3), st("w2", multi.StateStopping, 20, 1), st("w3", multi.StateStopped, 0, 0)}
		}, []int{2}},
	}
	for _, step := range steps {
		if got := d.changed(step.sts()); !slices.Equal(got, step.want) {
			t.Errorf("%s: changed %v; want %v", step.what, got, step.want)
		}
	}
}

// Off a terminal, a change is a line: its time (RFC 3339, UTC) and
// status's line, with the tree's processes when there are more than the
// node's own; a line the same as the node's last one is not written
// again; --quiet writes only those with an error.
func TestWatchLines(t *testing.T) {
	var out bytes.Buffer
	v := &lineView{o: &output{w: &out}, last: map[string]string{}}
	at := time.Date(2025, 3, 1, 12, 0, 0, 500, time.FixedZone("x", 3600))
	sts := []multi.Status{st("w1", multi.StateRunning, 10, 1), st("w2", multi.StateRunning, 20, 3)}
	if err := v.show(at, sts, []int{0, 1}); err != nil {
		t.Fatal(err)
	}
	want := "2025-03-01T11:00:00Z w1: running (pid 10)\n2025-03-01T11:00:00Z w2: running (pid 20), 3 processes\n"
	if out.String() != want {
		t.Errorf("lines:\n%s\nwant\n%s", out.String(), want)
	}
	// w1's count went from 1 to 0 (a tree not read): its line says the
	// same, so it is not written again.
	out.Reset()
	sts[0].Tree.Procs = 0
	sts[1].Tree.Procs = 1
	v.show(at, sts, []int{0, 1})
	if want := "2025-03-01T11:00:00Z w2: running (pid 20)\n"; out.String() != want {
		t.Errorf("lines:\n%s\nwant\n%s", out.String(), want)
	}

	out.Reset()
	q := &lineView{o: &output{w: &out, quiet: true}, last: map[string]string{}}
	bad := st("w3", multi.StateUnknown, 0, 0)
	bad.Err = errUnknownNode
	q.show(at, []multi.Status{sts[0], bad}, []int{0, 1})
	if want := "2025-03-01T11:00:00Z w3: unknown: unknown node\n"; out.String() != want {
		t.Errorf("--quiet lines:\n%s\nwant\n%s", out.String(), want)
	}
}

// --json: a line of JSON per change, its time with nanoseconds and the
// node's Status as status --json writes it, which decodes back.
func TestWatchJSON(t *testing.T) {
	var out bytes.Buffer
	v := &jsonView{w: &out}
	at := time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)
	sts := []multi.Status{st("w1", multi.StateRunning, 10, 1), st("w2", multi.StateStopped, 0, 0)}
	sts[0].Node.PidFile = "/run/multi/w1.pid"
	if err := v.show(at, sts, []int{0}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d lines, want 1:\n%s", len(lines), out.String())
	}
	var got struct {
		Time   string       `json:"time"`
		Status multi.Status `json:"status"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatalf("%s: %v", lines[0], err)
	}
	if got.Time != "2025-03-01T12:00:00.123456789Z" || got.Status.Node.Name != "w1" || got.Status.State != multi.StateRunning ||
		got.Status.PID != 10 || got.Status.Node.PidFile != "/run/multi/w1.pid" {
		t.Errorf("decoded %+v from %s", got, lines[0])
	}
	want, _ := json.Marshal(sts[0])
	if !strings.Contains(lines[0], `"status":`+string(want)+"}") {
		t.Errorf("%s\nholds no status as status --json writes it: %s", lines[0], want)
	}
}

// On a terminal the lines are drawn once, then redrawn in place (up to
// the first, each cleared) only when one changed, each cut to the width;
// the watch's end clears the line under them.
func TestWatchTerminal(t *testing.T) {
	var out bytes.Buffer
	v := &termView{o: &output{w: &out, color: true}}
	long := st(strings.Repeat("n", 100), multi.StateRunning, 30, 1)
	sts := []multi.Status{st("w1", multi.StateRunning, 10, 1), long}
	v.show(time.Now(), sts, nil)
	first := out.String()
	if strings.Contains(first, "\033[2A") || strings.Count(first, "\r\033[K") != 2 || !strings.Contains(first, "w1: \033[32mrunning\033[0m (pid 10)\n") {
		t.Errorf("first draw: %q", first)
	}
	for _, line := range strings.Split(strings.TrimSuffix(first, "\n"), "\n") {
		if n := len([]rune(regexp.MustCompile("\033\\[[0-9;]*[A-Za-z]|\r").ReplaceAllString(line, ""))); n > 79 {
			t.Errorf("%d columns: %q", n, line)
		}
	}
	out.Reset()
	v.show(time.Now(), sts, nil)
	if out.Len() != 0 {
		t.Errorf("redrawn with nothing changed: %q", out.String())
	}
	sts[0] = st("w1", multi.StateStopped, 0, 0)
	v.show(time.Now(), sts, []int{0})
	if got := out.String(); !strings.HasPrefix(got, "\033[2A\r\033[Kw1: \033[33mstopped\033[0m\n\r\033[Knnn") {
		t.Errorf("redraw: %q", got)
	}
	// At the end, the line under them (where Ctrl-C echoed) is cleared.
	out.Reset()
	v.end()
	if out.String() != "\r\033[K" {
		t.Errorf("end: %q", out.String())
	}
}

func TestCutVisible(t *testing.T) {
	for _, tc := range []struct {
		s    string
		w    int
		want string
	}{
		{"abcdef", 6, "abcdef"},
		{"abcdefg", 6, "abcde…"},
		{"\033[32mab\033[0mcdef", 6, "\033[32mab\033[0mcdef"},
		{"\033[32mabcdefgh\033[0m", 4, "\033[32mabc…\033[0m"},
		{"äöüßéè", 3, "äö…"},
		{"abc", 0, ""},
	} {
		if got := cutVisible(tc.s, tc.w); got != tc.want {
			t.Errorf("cutVisible(%q, %d) = %q; want %q", tc.s, tc.w, got, tc.want)
		}
	}
}

// --interval goes with --watch, and is no shorter than 50ms.
func TestWatchUsage(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"status", "w1", "--rundir", dir, "--interval=2s"},
		{"status", "w1", "--rundir", dir, "--watch", "--interval=10ms"},
		{"status", "w1", "--rundir", dir, "--watch", "--interval=soon"},
	} {
		if code, out, errs := runCLI(t, args...); code != exitUsage || out != "" || !strings.Contains(errs, "--interval") {
			t.Errorf("%q: exit %d, %q, %q; want 2 and a word on --interval", args, code, out, errs)
		}
	}
}

// A record replaced since the last look is read again, and only then
// (or while its time is too recent to tell): the node's recorded process
// is forgotten, so that Cluster.Status takes it from the record as it is
// now.
func TestWatchRecordStamps(t *testing.T) {
	dir := t.TempDir()
	// record writes records of names, their times as old as age.
	record := func(age time.Duration, names ...string) {
		t.Helper()
		recordNodes(t, dir, names...)
		for _, n := range names {
			at := time.Now().Add(-age)
			if err := os.Chtimes(filepath.Join(dir, n+".node"), at, at); err != nil {
				t.Fatal(err)
			}
		}
	}
	record(time.Hour, "w1", "w2")
	ns := []nodes.Node{{Name: "w1"}, {Name: "w2"}, {Name: "w3"}}
	r := &recordStamps{rundir: dir, seen: map[string]os.FileInfo{}}
	// look refreshes ns, its recorded processes set, and returns the
	// names of the nodes that were forgotten (to be read again).
	look := func() (out []string) {
		for i := range ns {
			ns[i].Recorded.PID, ns[i].Cgroup = 100+i, "/cg"
		}
		r.refresh(ns)
		for _, n := range ns {
			if n.Recorded.PID == 0 && n.Cgroup == "" {
				out = append(out, n.Name)
			}
		}
		return out
	}
	if got := look(); !slices.Equal(got, []string{"w1", "w2", "w3"}) {
		t.Errorf("first look: read again %v; want every one", got)
	}
	if got := look(); len(got) != 0 {
		t.Errorf("nothing changed: read again %v; want none", got)
	}
	// w2 started again (its record written anew, as old), w3 recorded
	// just now, w1 forgotten.
	record(30*time.Minute, "w2")
	record(0, "w3")
	os.Remove(filepath.Join(dir, "w1.node"))
	if got := look(); !slices.Equal(got, []string{"w1", "w2", "w3"}) {
		t.Errorf("after w2's and w3's records were written and w1's removed: read again %v; want w1 w2 w3", got)
	}
	if got := look(); !slices.Equal(got, []string{"w3"}) {
		t.Errorf("a look later: read again %v; want w3 only, its time too recent to tell a change by", got)
	}
	// took keeps what the look took.
	sts := []multi.Status{{Node: nodes.Node{Name: "w3", Cgroup: "/cg3"}}, {Node: nodes.Node{Name: "w1"}}}
	r.took(ns, sts)
	if ns[2].Cgroup != "/cg3" || ns[0].Cgroup != "" || ns[1].Cgroup != "/cg" {
		t.Errorf("took: %+v", ns)
	}
}
