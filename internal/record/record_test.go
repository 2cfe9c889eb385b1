package record_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
)

func TestRecords(t *testing.T) {
	t.Parallel()
	rundir := filepath.Join(t.TempDir(), "run")
	ns, err := nodes.Spec{Names: []string{"b", "a"}, RunDir: rundir, Host: "h",
		Command: []string{"sh", "-c", "echo 'it''s %n'"}, Dir: "/srv", Env: []string{"K=v", "E="}}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		if err := record.Write(rundir, n); err != nil {
			t.Fatal(err)
		}
	}
	got, err := record.ReadAll(rundir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, ns) {
		t.Errorf("ReadRecords = %+v; want %+v (in index order)", got, ns)
	}
	entries, _ := os.ReadDir(rundir)
	if len(entries) != 3 || entries[0].Name() != ".records.lock" {
		t.Errorf("rundir holds %v; want the lock file, the 2 records and no temporary file", entries)
	}
	if _, err := record.Read(rundir, "zz"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadRecord(missing): %v; want ErrNotExist", err)
	}
	if recs, err := record.ReadAll(filepath.Join(rundir, "none")); err != nil || len(recs) != 0 {
		t.Errorf("missing rundir: %v, %v; want no records", recs, err)
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	rundir := t.TempDir()
	started, _ := nodes.Spec{Names: []string{"w1", "w2"}, RunDir: rundir, PidFile: "/p/%n.pid",
		Command: []string{"sleep", "%n"}}.Nodes()
	for _, n := range started {
		record.Write(rundir, n)
	}

	// Names without templates take pidfile, logfile and command from records.
	got, err := record.Resolve(nodes.Spec{Names: []string{"w2", "w3"}, RunDir: rundir}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].PidFile != "/p/w2.pid" || !reflect.DeepEqual(got[0].Command, []string{"sleep", "w2"}) {
		t.Errorf("recorded w2 = %+v", got[0])
	}
	if got[1].PidFile != filepath.Join(rundir, "w3.pid") || got[1].Command != nil {
		t.Errorf("unrecorded w3 = %+v; want defaults and no command", got[1])
	}

	// A template on the command line wins over the record.
	got, _ = record.Resolve(nodes.Spec{Names: []string{"w1"}, RunDir: rundir, PidFile: "/q/%n.pid"}, false, nil)
	if got[0].PidFile != "/q/w1.pid" {
		t.Errorf("explicit --pidfile lost: %+v", got[0])
	}

	// No names: every recorded node.
	got, err = record.Resolve(nodes.Spec{RunDir: rundir}, false, nil)
	if err != nil || len(got) != 2 || got[0].Name != "w1" || got[1].Name != "w2" {
		t.Errorf("all recorded = %+v, %v", got, err)
	}
	if _, err := record.Resolve(nodes.Spec{RunDir: t.TempDir()}, false, nil); !errors.Is(err, nodes.ErrNoNodes) {
		t.Errorf("empty rundir: %v; want ErrNoNodes", err)
	}
}

// A per-node template (NodeFiles, as --pidfile:w2=) wins over the record
// for the nodes its scope names, by name or index, and only for them,
// even when it gives the default path; the others take the record's
// files. The Spec's own template wins for every node.
func TestResolveNodeFiles(t *testing.T) {
	t.Parallel()
	rundir := t.TempDir()
	started, _ := nodes.Spec{Names: []string{"w1", "w2", "w3"}, RunDir: rundir, PidFile: "/rec/%n.pid",
		LogFile: "/rec/%n.log", Command: []string{"sleep", "%n"}}.Nodes()
	for _, n := range started {
		if err := record.Write(rundir, n); err != nil {
			t.Fatal(err)
		}
	}
	files := []nodes.Option{
		{Name: "pidfile", Value: "/given/%n.pid", HasValue: true, Scope: "w2"},
		{Name: "logfile", Value: filepath.Join(rundir, "%n.log"), HasValue: true, Scope: "3"},
	}
	got, err := record.Resolve(nodes.Spec{Names: []string{"w1", "w2", "w3"}, RunDir: rundir, NodeFiles: files}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{
		{"/rec/w1.pid", "/rec/w1.log"},
		{"/given/w2.pid", "/rec/w2.log"},
		{"/rec/w3.pid", filepath.Join(rundir, "w3.log")}, // the default path, but given
	}
	for i, n := range got {
		if n.PidFile != want[i][0] || n.LogFile != want[i][1] {
			t.Errorf("%s: %s, %s; want %s, %s", n, n.PidFile, n.LogFile, want[i][0], want[i][1])
		}
	}
	got, err = record.Resolve(nodes.Spec{Names: []string{"w1", "w2", "w3"}, RunDir: rundir, PidFile: "/all/%n.pid", NodeFiles: files}, false, nil)
	if err != nil || got[0].PidFile != "/all/w1.pid" || got[1].PidFile != "/given/w2.pid" || got[0].LogFile != "/rec/w1.log" {
		t.Errorf("with --pidfile and per-node files: %+v, %v", got, err)
	}
}

// A record names the node's process once it runs; a record without one
// (written before the start, or by an older multi) names none, and so does
// one with a nonsense pid.
func TestRecordStarted(t *testing.T) {
	t.Parallel()
	rundir := t.TempDir()
	ns, err := nodes.Spec{Names: []string{"w1"}, RunDir: rundir, Command: []string{"sleep", "1"}}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	n := ns[0]
	for _, tc := range []struct {
		write, want nodes.Started
	}{
		{nodes.Started{}, nodes.Started{}},
		{nodes.Started{PID: 1234, StartTicks: 98765}, nodes.Started{PID: 1234, StartTicks: 98765}},
		{nodes.Started{PID: 1234, StartTicks: 98765, PidfdIno: 4321}, nodes.Started{PID: 1234, StartTicks: 98765, PidfdIno: 4321}},
		{nodes.Started{PID: -5, StartTicks: 98765}, nodes.Started{}},
		{nodes.Started{PID: 1234}, nodes.Started{}},
	} {
		if err := record.WriteStarted(rundir, n, tc.write); err != nil {
			t.Fatal(err)
		}
		got, st, err := record.ReadStarted(rundir, "w1")
		if err != nil {
			t.Fatal(err)
		}
		if st != tc.want || !reflect.DeepEqual(got, n) {
			t.Errorf("wrote %+v: read %+v, %+v", tc.write, st, got)
		}
	}
}

// TestResolveRecorded: a node resolved from its record carries the process
// the record names (what a stop checks the lock holder against, without
// reading the record again); not one given another pidfile, and not a
// node read by ReadRecord or ReadRecords.
func TestResolveRecorded(t *testing.T) {
	t.Parallel()
	rundir := t.TempDir()
	ns, err := nodes.Spec{Names: []string{"w1"}, RunDir: rundir, Command: []string{"sleep", "1"}}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	want := nodes.Started{PID: 1234, StartTicks: 98765, PidfdIno: 4321}
	if err := record.WriteStarted(rundir, ns[0], want); err != nil {
		t.Fatal(err)
	}
	for _, names := range [][]string{{"w1"}, nil} {
		got, err := record.Resolve(nodes.Spec{Names: names, RunDir: rundir}, false, nil)
		if err != nil || len(got) != 1 || got[0].Recorded != want {
			t.Errorf("Resolve of %v: %+v, %v; want w1 carrying %+v", names, got, err, want)
		}
	}
	got, err := record.Resolve(nodes.Spec{Names: []string{"w1"}, RunDir: rundir, PidFile: "/other/%n.pid"}, false, nil)
	if err != nil || got[0].Recorded != (nodes.Started{}) {
		t.Errorf("Resolve with another pidfile: %+v, %v; want no recorded process", got, err)
	}
	if n, err := record.Read(rundir, "w1"); err != nil || n.Recorded != (nodes.Started{}) {
		t.Errorf("ReadRecord: %+v, %v; want no recorded process", n, err)
	}
	if rs, err := record.ReadAll(rundir); err != nil || rs[0].Recorded != (nodes.Started{}) {
		t.Errorf("ReadRecords: %+v, %v; want no recorded process", rs, err)
	}
}

// A record written in another pid namespace (a rundir shared with a
// container) names no process here: its pid is a number of that namespace,
// and a session or lost process found under it here would be a stranger's.
func TestRecordOfAnotherPidNamespace(t *testing.T) {
	t.Parallel()
	if proc.PidNamespace() == 0 {
		t.Skip("no /proc/self/ns/pid")
	}
	rundir := t.TempDir()
	ns, err := nodes.Spec{Names: []string{"w1"}, RunDir: rundir, Command: []string{"sleep", "1"}}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	want := nodes.Started{PID: 4242, StartTicks: 99}
	if err := record.WriteStarted(rundir, ns[0], want); err != nil {
		t.Fatal(err)
	}
	if _, got, err := record.ReadStarted(rundir, "w1"); err != nil || got != want {
		t.Fatalf("the record of this namespace names %+v, %v; want %+v", got, err, want)
	}
	path := record.Path(rundir, "w1")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	own := fmt.Sprintf(`"pid_ns": %d`, proc.PidNamespace())
	if !bytes.Contains(b, []byte(own)) {
		t.Fatalf("record %s has no %s:\n%s", path, own, b)
	}
	b = bytes.Replace(b, []byte(own), []byte(fmt.Sprintf(`"pid_ns": %d`, proc.PidNamespace()+1)), 1)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, got, err := record.ReadStarted(rundir, "w1"); err != nil || got != (nodes.Started{}) {
		t.Errorf("a record of another pid namespace names %+v, %v; want no process", got, err)
	}
}
