package multi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
)

// update rewrites the golden files of the JSON schema:
// go test ./multi -run JSON -update.
var update = flag.Bool("update", false, "rewrite testdata/*.json from the values the tests make")

// golden compares v's JSON, indented, with testdata/name (README's
// schema, by example), and reads it back into out.
func golden(t *testing.T, name string, v, out any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Errorf("%s: the JSON written is\n%s\nthe schema's (go test -run JSON -update rewrites it):\n%s", path, b, want)
	}
	dec := json.NewDecoder(bytes.NewReader(want))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// schemaNode is a node with every field set.
var schemaNode = nodes.Node{Name: "w1", Host: "h", Index: 1, PidFile: "/r/w1.pid", LogFile: "/r/w1.log",
	Command: []string{"app", "-x"}, Options: []string{"-x"}, Dir: "/srv", Env: []string{"A=1"}, SelfLock: true,
	Ready: nodes.ReadyCheck{Kind: nodes.TCP, Target: "127.0.0.1:8001"}, Cgroup: "/sys/fs/cgroup/multi.1/w1", KillMode: "mixed"}

// A slice of Results, one of every Outcome with every field set, is
// written as the golden file says (snake_case names, outcomes and
// signals as words, durations as Go writes them, errors as their text)
// and comes back from it as it went, its errors as their text.
func TestResultJSON(t *testing.T) {
	t.Parallel()
	var in []multi.Result
	for o := multi.NoOutcome; o <= multi.Failed; o++ {
		r := multi.Result{Node: schemaNode, Outcome: o, PID: 100 + int(o), Signal: syscall.SIGTERM, KilledAfter: 2 * time.Second,
			OldPID: 99, FilePID: -1, HeldBy: 98, TookOver: true, Lost: true, Lingering: 2, Exit: &multi.ExitStatus{Code: -1, Signal: syscall.SIGKILL},
			Ready: multi.Unready, Containment: multi.InCgroup, RecordErr: errors.New("could not record the node's process: disk full"),
			TreeErr: errors.New("cgroup /sys/fs/cgroup/multi.1/w1: 1 process left; not removed"), Elapsed: 1500 * time.Millisecond}
		if o == multi.AlreadyRunning || o == multi.Lost || o == multi.Failed {
			r.Err = &multi.NodeError{Node: "w1", Op: "start", Err: errors.New("boom")}
		}
		in = append(in, r)
	}
	// The optional fields absent; a signal with no name by its number.
	in = append(in, multi.Result{Node: nodes.Node{Name: "w2"}, Outcome: multi.Started, PID: 7, Elapsed: time.Millisecond},
		multi.Result{Node: nodes.Node{Name: "w3"}, Outcome: multi.Signalled, PID: 8, Signal: syscall.Signal(40), Elapsed: time.Millisecond})
	var out []multi.Result
	golden(t, "results.json", in, &out)
	if len(out) != len(in) {
		t.Fatalf("%d results back; want %d", len(out), len(in))
	}
	for i := range in {
		want, got := in[i], out[i]
		if errText(got.Err) != errText(want.Err) || errText(got.RecordErr) != errText(want.RecordErr) || errText(got.TreeErr) != errText(want.TreeErr) {
			t.Errorf("%s: errors %v, %v, %v; want %v, %v, %v", want.Outcome, got.Err, got.RecordErr, got.TreeErr, want.Err, want.RecordErr, want.TreeErr)
		}
		want.Err, want.RecordErr, want.TreeErr, got.Err, got.RecordErr, got.TreeErr = nil, nil, nil, nil, nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: back from JSON as\n%+v; want\n%+v", want.Outcome, got, want)
		}
	}
	var bad multi.Result
	if err := json.Unmarshal([]byte(`{"outcome":"exploded","elapsed":"1ms"}`), &bad); err == nil {
		t.Errorf("an unknown outcome's word is read as %v", bad.Outcome)
	}
	if _, err := json.Marshal(multi.Result{Outcome: multi.Failed + 1}); err == nil {
		t.Error("an outcome with no word is written")
	}
	var r multi.Result
	if err := json.Unmarshal([]byte(`{"outcome":"stopped","signal":"SIGNOPE","elapsed":"1ms"}`), &r); err == nil {
		t.Error("an unknown signal is read")
	}
}

// A Status of every State, as Cluster.Status makes them, is written as
// the golden file says and comes back from it as it went (errors as
// their text); String says it briefly.
func TestStatusJSON(t *testing.T) {
	t.Parallel()
	n := schemaNode
	cpu, mem := int64(1500), int64(1<<20)
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	in := []multi.Status{
		{Node: n, State: multi.StateRunning, PID: 42, Started: started, FilePID: 41, Ready: multi.Starting,
			ReadyErr: errors.New("tcp:127.0.0.1:8001: connection refused"), ReadyStatus: "warming up",
			Tree: multi.Tree{Containment: multi.InCgroup, Cgroup: n.Cgroup, Procs: 3, Memory: &mem, CPUUsec: &cpu}},
		{Node: n, State: multi.StateElsewhere, Tree: multi.Tree{Containment: multi.InCgroup, Cgroup: n.Cgroup}},
		{Node: n, State: multi.StateStale, FilePID: 40, Tree: multi.Tree{Containment: multi.InSession}},
		{Node: n, State: multi.StateStopped, Tree: multi.Tree{Containment: multi.InSession}},
		{Node: n, State: multi.StateLost, PID: 43, Started: started, Tree: multi.Tree{Containment: multi.InSession, Procs: 1}},
		{Node: n, State: multi.StateStopping, PID: 44, Tree: multi.Tree{Containment: multi.InSession}},
		{Node: n, State: multi.StateLingering, Tree: multi.Tree{Containment: multi.InCgroup, Cgroup: n.Cgroup, Procs: 2, Lingering: true}},
		{Node: n, State: multi.StateFatal, Fatal: "multi run (pid 7) gave up on it", Tree: multi.Tree{Containment: multi.InSession}},
		{Node: n, State: multi.StateUnknown, PID: 45, Err: &multi.NodeError{Node: "w1", Op: "status", Err: errors.New("read lock")}},
		{Node: n, State: multi.StateMismatch, PID: 46, Started: started, FilePID: 46, Tree: multi.Tree{Containment: multi.InCgroup, Cgroup: n.Cgroup, Procs: 1},
			Err: &multi.NodeError{Node: "w1", Op: "status", Err: errors.New("pidfile /r/w1.pid is locked by pid 46, not by pid 42 that the record of w1 names")}},
	}
	var out []multi.Status
	golden(t, "statuses.json", in, &out)
	if len(out) != len(in) {
		t.Fatalf("%d statuses back; want %d", len(out), len(in))
	}
	for i := range in {
		want, got := in[i], out[i]
		for _, e := range [][2]error{{got.Err, want.Err}, {got.ReadyErr, want.ReadyErr}} {
			if errText(e[0]) != errText(e[1]) {
				t.Errorf("%s: error %v; want %v", want, e[0], e[1])
			}
		}
		want.Err, want.ReadyErr, got.Err, got.ReadyErr = nil, nil, nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("back from JSON as\n%+v; want\n%+v", got, want)
		}
	}
	wants := []string{"w1: running (pid 42)", "w1: elsewhere", "w1: stale", "w1: stopped", "w1: lost (pid 43)", "w1: stopping (pid 44)",
		"w1: lingering (2 processes)", "w1: fatal: multi run (pid 7) gave up on it", "w1: unknown: read lock",
		"w1: mismatch: pidfile /r/w1.pid is locked by pid 46, not by pid 42 that the record of w1 names"}
	for i, want := range wants {
		if got := in[i].String(); got != want {
			t.Errorf("String: %q; want %q", got, want)
		}
	}
	for _, r := range []multi.Readiness{multi.Ready, multi.Starting, multi.Unready} {
		if b, _ := json.Marshal(multi.Status{State: multi.StateRunning, Ready: r}); !strings.Contains(string(b), `"ready":"`+string(r)+`"`) {
			t.Errorf("readiness %s written as %s", r, b)
		}
	}
	if !in[0].Mismatch() || in[2].Mismatch() {
		t.Errorf("Mismatch: running with pidfile text 41 for pid 42 %v, stale %v; want true, false", in[0].Mismatch(), in[2].Mismatch())
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
