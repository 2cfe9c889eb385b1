package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
)

// recordNodes records nodes named names in dir, as a start would have.
func recordNodes(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, name := range names {
		n := nodes.Node{Name: name, Command: []string{"true"}, PidFile: filepath.Join(dir, name+".pid"), LogFile: filepath.Join(dir, name+".log")}
		if err := record.Write(dir, n); err != nil {
			t.Fatal(err)
		}
	}
}

// Recorded nodes without a pidfile are stopped: exit 3.
func TestStatusStopped(t *testing.T) {
	dir := t.TempDir()
	recordNodes(t, dir, "w1", "w2")
	code, out, errs := runCLI(t, "status", "w1", "w2", "--rundir", dir)
	if code != exitStopped || out != "w1: stopped\nw2: stopped\n" || errs != "" {
		t.Errorf("status: exit %d, %q, %q; want 3", code, out, errs)
	}
	code, out, errs = runCLI(t, "status", "w1", "--rundir", dir, "--quiet")
	if code != exitStopped || out != "" || errs != "" {
		t.Errorf("status --quiet: exit %d, %q, %q; want 3 and nothing printed", code, out, errs)
	}
}

// On an empty rundir, named nodes are unknown (no record, no pidfile):
// exit 4, the closest recorded names offered, and nothing written.
func TestStatusUnknown(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCLI(t, "status", "w1", "--rundir", dir)
	want := "w1: unknown: unknown node: no record " + filepath.Join(dir, "w1.node") + " and no pidfile " + filepath.Join(dir, "w1.pid") + "\n"
	if code != exitUnknown || out != want || errs != "" {
		t.Errorf("status: exit %d, %q, %q; want 4, %q", code, out, errs, want)
	}
	emptyDir(t, dir)
	recordNodes(t, dir, "web1", "web2", "db1")
	code, out, _ = runCLI(t, "status", "webb1", "--rundir", dir)
	if code != exitUnknown || !strings.HasSuffix(out, "; did you mean web1?\n") {
		t.Errorf("status webb1: exit %d, %q; want 4 and did you mean web1?", code, out)
	}
	code, out, _ = runCLI(t, "status", "web3", "--rundir", dir)
	if code != exitUnknown || !strings.HasSuffix(out, "; did you mean web1 or web2?\n") {
		t.Errorf("status web3: exit %d, %q; want 4 and did you mean web1 or web2?", code, out)
	}
}

// A pidfile whose lock nobody holds is stale: exit 1, and it is left as
// it is.
func TestStatusStale(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "w1.pid")
	if err := os.WriteFile(pidfile, []byte("12345\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	recordNodes(t, dir, "w2")
	code, out, errs := runCLI(t, "status", "w1", "w2", "--rundir", dir)
	want := "w1: stale (pidfile " + pidfile + " left behind; no process holds its lock)\nw2: stopped\n"
	if code != exitFailed || out != want || errs != "" {
		t.Errorf("status: exit %d, %q, %q; want 1, %q", code, out, errs, want)
	}
	if b, err := os.ReadFile(pidfile); err != nil || string(b) != "12345\n" {
		t.Errorf("pidfile after status: %q, %v", b, err)
	}
}

// --json is the library's JSON of each node's Status, README's schema:
// an array of one object per node with fixed, snake_case keys, which
// decodes into []multi.Status with no key left over and encodes again
// byte for byte as the library writes it.
func TestStatusJSON(t *testing.T) {
	dir := t.TempDir()
	recordNodes(t, dir, "w1", "w2")
	code, out, errs := runCLI(t, "status", "w1", "w2", "--suffix=h", "--json", "--rundir", dir)
	if code != exitStopped || errs != "" {
		t.Fatalf("status --json: exit %d, stderr %q", code, errs)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	node := func(name string) map[string]any {
		return map[string]any{"name": name, "host": "h", "index": 1.0, "command": []any{"true"},
			"pidfile": filepath.Join(dir, name+".pid"), "logfile": filepath.Join(dir, name+".log")}
	}
	want := []map[string]any{
		{"node": node("w1"), "state": "stopped", "pid": 0.0, "file_pid": 0.0, "tree": map[string]any{"containment": "session", "procs": 0.0}},
		{"node": node("w2"), "state": "stopped", "pid": 0.0, "file_pid": 0.0, "tree": map[string]any{"containment": "session", "procs": 0.0}},
	}
	want[1]["node"].(map[string]any)["index"] = 2.0
	if !reflect.DeepEqual(got, want) {
		t.Errorf("status --json:\n%s\nwant %v", out, want)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var sts []multi.Status
	if err := dec.Decode(&sts); err != nil {
		t.Fatalf("status --json is not []multi.Status: %v", err)
	}
	lib, err := json.Marshal(sts)
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(out)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(lib, compact.Bytes()) {
		t.Errorf("the library writes\n%s\nthe CLI wrote\n%s", lib, compact.Bytes())
	}
}

// Every state has its colour and its exit code, and the worst state
// wins the exit code: unknown and lost 4, lingering 150, stale and fatal
// 1, stopped and stopping 3.
func TestStatusCode(t *testing.T) {
	t.Parallel()
	for _, st := range []multi.State{multi.StateUnknown, multi.StateLost, multi.StateMismatch, multi.StateStopping, multi.StateLingering,
		multi.StateFatal, multi.StateRunning, multi.StateElsewhere, multi.StateStale, multi.StateStopped} {
		if _, ok := stateColors[st]; !ok {
			t.Errorf("%s has no colour", st)
		}
		if _, ok := stateCodes[st]; !ok {
			t.Errorf("%s has no exit code", st)
		}
	}
	st := func(ss ...multi.State) []multi.Status {
		var out []multi.Status
		for _, s := range ss {
			out = append(out, multi.Status{State: s})
		}
		return out
	}
	tests := []struct {
		sts  []multi.Status
		want int
	}{
		{nil, exitOK},
		{st(multi.StateRunning, multi.StateElsewhere), exitOK},
		{st(multi.StateRunning, multi.StateStopped), exitStopped},
		{st(multi.StateRunning, multi.StateStopping), exitStopped},
		{st(multi.StateStopped, multi.StateStale, multi.StateStopped), exitFailed},
		{st(multi.StateFatal, multi.StateStopped), exitFailed},
		{st(multi.StateStale, multi.StateLingering, multi.StateFatal), exitLingering},
		{st(multi.StateStale, multi.StateUnknown, multi.StateStopped), exitUnknown},
		{st(multi.StateLingering, multi.StateLost), exitUnknown},
	}
	for i, tt := range tests {
		if got := statusCode(tt.sts); got != tt.want {
			t.Errorf("case %d: statusCode = %d; want %d", i, got, tt.want)
		}
	}
}

// The table a terminal gets: a header, one aligned row per node, the
// state coloured.
func TestStatusTable(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	o := &output{w: &buf, tty: true, color: true}
	o.statusTable([]multi.Status{
		{Node: nodes.Node{Name: "w1", PidFile: "/r/w1.pid", LogFile: "/r/w1.log"}, State: multi.StateStale},
		{Node: nodes.Node{Name: "web2", PidFile: "/r/web2.pid", LogFile: "/r/web2.log"}, State: multi.StateStopped},
	}, "/elsewhere")
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "NODE  ") || !strings.Contains(lines[0], "STATE") ||
		!strings.Contains(lines[1], red+"stale\033[0m") || !strings.Contains(lines[2], yellow+"stopped\033[0m") ||
		strings.Index(lines[1], "/r/w1.pid") != strings.Index(lines[2], "/r/web2.pid") {
		t.Errorf("table:\n%s", buf.String())
	}
}

// The table fits 80 columns however long the paths: files in the rundir
// are relative to it, others lose their middle; the note that the
// pidfile's text disagrees with the lock holder stays, under the table.
func TestStatusTableFits(t *testing.T) {
	t.Parallel()
	rundir := "/run/user/1000/a/rather/long/folder/for/runtime/files/of/multi"
	far := "/srv/applications/production/celery/workers/pidfiles/of/the/cluster/"
	var buf bytes.Buffer
	o := &output{w: &buf, tty: true, color: true}
	o.statusTable([]multi.Status{
		{Node: nodes.Node{Name: "worker-one", PidFile: rundir + "/worker-one.pid", LogFile: rundir + "/worker-one.log"},
			State: multi.StateRunning, PID: os.Getpid(), FilePID: 41},
		{Node: nodes.Node{Name: "w2", PidFile: far + "w2.pid", LogFile: far + "logs/w2.log"}, State: multi.StateStopped},
	}, rundir)
	out := buf.String()
	checkFits80(t, out)
	for _, want := range []string{"files in " + rundir + "\n", "  worker-one.pid  ", "…", "w2.pid  ", "w2.log\n",
		"running*", "* worker-one: the pidfile's text says 41; the lock holder, pid " + strconv.Itoa(os.Getpid()) + ", is the truth\n"} {
		if !strings.Contains(strings.ReplaceAll(out, "\n  ", " "), want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// checkFits80 fails t for each line of out wider than 80 columns, its
// colours left out.
func checkFits80(t *testing.T, out string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		plain := strings.NewReplacer(green, "", yellow, "", red, "", "\033[0m", "").Replace(line)
		if n := utf8.RuneCountInString(plain); n > 80 {
			t.Errorf("%d columns: %q", n, plain)
		}
	}
}

// With readiness and STATUS= texts, and a node a run gave up on, the
// table still fits 80 columns: the state column says ready, starting,
// unready or fatal, and the STATUS= text and the reason are wrapped
// under it, whole.
func TestStatusTableReadyFits(t *testing.T) {
	t.Parallel()
	rundir := "/run/user/1000/a/rather/long/folder/for/runtime/files/of/multi"
	long := "serving 1200 requests a second on 127.0.0.1:8001, queue depth 3, cache warm, last reload at 12:00:01"
	var buf bytes.Buffer
	o := &output{w: &buf, tty: true, color: true}
	o.statusTable([]multi.Status{
		{Node: nodes.Node{Name: "worker-number-one", PidFile: rundir + "/worker-number-one.pid", LogFile: rundir + "/worker-number-one.log"},
			State: multi.StateRunning, PID: os.Getpid(), FilePID: os.Getpid(), Ready: multi.Ready, ReadyStatus: long},
		{Node: nodes.Node{Name: "w2", PidFile: rundir + "/w2.pid", LogFile: rundir + "/w2.log"},
			State: multi.StateRunning, PID: os.Getpid(), FilePID: os.Getpid(), Ready: multi.Unready, ReadyStatus: "warming up"},
		{Node: nodes.Node{Name: "w3", PidFile: rundir + "/w3.pid", LogFile: rundir + "/w3.log"},
			State: multi.StateFatal, Fatal: "multi run (pid 7) gave up on it: restarted 3 times within 1m0s (--max-restarts), and exited again (exit status 3)"},
	}, rundir)
	out := buf.String()
	checkFits80(t, out)
	joined := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"worker-number-one: STATUS=" + long, "w2: STATUS=warming up", "* w3: multi run (pid 7) gave up on it: restarted 3 times",
		green + "ready", yellow + "unready", red + "fatal*"} {
		if !strings.Contains(joined, want) && !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// Under the table of recorded nodes, status says how to forget the
// stopped ones.
func TestForgetHint(t *testing.T) {
	t.Parallel()
	sts := []multi.Status{
		{Node: nodes.Node{Name: "w1"}, State: multi.StateRunning},
		{Node: nodes.Node{Name: "w2"}, State: multi.StateStopped},
		{Node: nodes.Node{Name: "w3"}, State: multi.StateStale},
	}
	if got, want := forgetHint(sts, 80), "stopped nodes keep their records; to forget them: multi forget w2 w3"; got != want {
		t.Errorf("hint %q; want %q", got, want)
	}
	if got := forgetHint(sts[:1], 80); got != "" {
		t.Errorf("hint with nothing stopped: %q", got)
	}
}

// A name neither recorded nor with a pidfile (a typo, another --rundir)
// is unknown to every verb, as to status: exit 4, the closest names
// given, nothing done to it; the other nodes given are done.
func TestUnknownNodeEverywhere(t *testing.T) {
	dir := t.TempDir()
	recordNodes(t, dir, "web1", "web2")
	for _, verb := range []string{"status", "stop", "stopwait", "kill"} {
		code, out, _ := runCLI(t, verb, "web1", "web3", "--rundir", dir)
		if code != exitUnknown || !strings.Contains(out, "web3: ") || !strings.Contains(out, "unknown node: no record "+filepath.Join(dir, "web3.node")) ||
			!strings.Contains(out, "did you mean web1 or web2?") || !strings.Contains(out, "web1: ") {
			t.Errorf("%s web1 web3: exit %d, %q; want 4, web3 unknown, did you mean web1 or web2", verb, code, out)
		}
	}
}

// What a running node's tree ran into (OOM kills, limits reached) is in
// its status line, in the table's notes under the table, and in the
// JSON; a tree that ran into nothing says nothing of it.
func TestStatusLimitHits(t *testing.T) {
	t.Parallel()
	two := int64(2)
	zero := int64(0)
	hit := multi.Status{Node: nodes.Node{Name: "w1", PidFile: "/r/w1.pid", LogFile: "/r/w1.log"}, State: multi.StateRunning, PID: 12, FilePID: 12,
		Tree: multi.Tree{Containment: multi.InCgroup, OOMKills: &two, LimitHits: map[string]int64{"memory.max": 5, "memory.high": 0, "pids.max": 1, "cpu.max": 9}}}
	calm := multi.Status{Node: nodes.Node{Name: "w2", PidFile: "/r/w2.pid", LogFile: "/r/w2.log"}, State: multi.StateRunning, PID: 13, FilePID: 13,
		Tree: multi.Tree{Containment: multi.InCgroup, OOMKills: &zero, LimitHits: map[string]int64{"memory.max": 0}}}
	o := &output{}
	const want = "w1: running (pid 12; 2 OOM kills, memory.max reached 5 times, pids.max reached 1 time, cpu.max throttled 9 periods)"
	if got := o.statusLine(hit, ""); got != want {
		t.Errorf("status line:\n got %s\nwant %s", got, want)
	}
	if got := o.statusLine(calm, ""); got != "w2: running (pid 13)" {
		t.Errorf("status line of a calm node: %s", got)
	}
	var buf bytes.Buffer
	o = &output{w: &buf}
	o.statusTable([]multi.Status{hit, calm}, "/r")
	if !strings.Contains(buf.String(), "w1: 2 OOM kills, memory.max reached 5 times") || strings.Contains(buf.String(), "w2: ") {
		t.Errorf("table:\n%s", buf.String())
	}
	b, err := json.Marshal(hit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"oom_kills":2,"limit_hits":{"cpu.max":9,"memory.high":0,"memory.max":5,"pids.max":1}`) {
		t.Errorf("JSON: %s", b)
	}
}
