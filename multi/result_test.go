package multi_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// A slice of Results, one of every Outcome with every field set, comes
// back from JSON as it went, its errors as their text; the outcomes are
// words on the wire.
func TestResultJSONRoundTrip(t *testing.T) {
	t.Parallel()
	n := nodes.Node{Name: "w1", Host: "h", Index: 1, PidFile: "/r/w1.pid", LogFile: "/r/w1.log",
		Command: []string{"app", "-x"}, Options: []string{"-x"}, Dir: "/srv", Env: []string{"A=1"}, SelfLock: true}
	var in []multi.Result
	for o := multi.NoOutcome; o <= multi.Failed; o++ {
		r := multi.Result{Node: n, Outcome: o, PID: 100 + int(o), Signal: syscall.SIGTERM, KilledAfter: 2 * time.Second,
			OldPID: 99, FilePID: -1, HeldBy: 98, TookOver: true, Lost: true, Exit: &multi.ExitStatus{Code: -1, Signal: syscall.SIGKILL},
			RecordErr: errors.New("could not record the node's process: disk full"), Elapsed: 1500 * time.Millisecond}
		if o == multi.AlreadyRunning || o == multi.Lost || o == multi.Failed {
			r.Err = &multi.NodeError{Node: "w1", Op: "start", Err: errors.New("boom")}
		}
		in = append(in, r)
	}
	in = append(in, multi.Result{Node: n, Outcome: multi.Started, PID: 7}) // the optional fields absent
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, word := range []string{`"Outcome":"killed-after-timeout"`, `"Outcome":"already-running"`, `"Err":"multi: start w1: boom"`} {
		if !strings.Contains(string(b), word) {
			t.Errorf("JSON has no %s: %.300s...", word, b)
		}
	}
	var out []multi.Result
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("%d results back; want %d", len(out), len(in))
	}
	for i := range in {
		want, got := in[i], out[i]
		if errText(got.Err) != errText(want.Err) || errText(got.RecordErr) != errText(want.RecordErr) {
			t.Errorf("%s: errors %v, %v; want %v, %v", want.Outcome, got.Err, got.RecordErr, want.Err, want.RecordErr)
		}
		want.Err, want.RecordErr, got.Err, got.RecordErr = nil, nil, nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: back from JSON as\n%+v; want\n%+v", want.Outcome, got, want)
		}
	}
	var o multi.Outcome
	if err := json.Unmarshal([]byte(`"exploded"`), &o); err == nil {
		t.Errorf("an unknown outcome's word is read as %v", o)
	}
	if _, err := json.Marshal(multi.Result{Outcome: multi.Failed + 1}); err == nil {
		t.Error("an outcome with no word is written")
	}
}

// A Status, as Cluster.Status returns it, comes back from JSON as it went
// (its state a word, its errors as their text), and has a String.
func TestStatusJSONRoundTrip(t *testing.T) {
	t.Parallel()
	n := nodes.Node{Name: "w1", PidFile: "/r/w1.pid", LogFile: "/r/w1.log"}
	in := []multi.Status{
		{Node: n, Info: pidfile.Info{Path: n.PidFile, State: pidfile.Running, PID: 42, FilePID: 41}},
		{Node: n, Info: pidfile.Info{Path: n.PidFile, State: pidfile.Stale, FileErr: errors.New("bad pidfile: empty")}},
		{Node: n, Info: pidfile.Info{Path: n.PidFile, State: pidfile.Absent},
			Lost: &multi.LostError{PID: 43, Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}},
		{Node: n, Info: pidfile.Info{Path: n.PidFile, State: pidfile.Absent}, Stopping: 44},
		{Node: n, Info: pidfile.Info{Path: n.PidFile, State: pidfile.Foreign, LockErr: errors.New("read lock")},
			Err: &multi.NodeError{Node: "w1", Op: "status", Err: errors.New("read lock")}},
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"State":"running"`) || !strings.Contains(string(b), `"State":"foreign"`) {
		t.Errorf("states not written as words: %s", b)
	}
	var out []multi.Status
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("%d statuses back; want %d", len(out), len(in))
	}
	for i := range in {
		want, got := in[i], out[i]
		for _, e := range [][2]error{{got.Err, want.Err}, {got.LockErr, want.LockErr}, {got.FileErr, want.FileErr}} {
			if errText(e[0]) != errText(e[1]) {
				t.Errorf("%s: error %v; want %v", want, e[0], e[1])
			}
		}
		want.Err, want.LockErr, want.FileErr, got.Err, got.LockErr, got.FileErr = nil, nil, nil, nil, nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("back from JSON as\n%+v; want\n%+v", got, want)
		}
	}
	wants := []string{"w1: running (pid 42)", "w1: stale", "w1: lost (pid 43)", "w1: stopping (pid 44)", "w1: unknown: read lock"}
	for i, want := range wants {
		if got := in[i].String(); got != want {
			t.Errorf("String: %q; want %q", got, want)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
