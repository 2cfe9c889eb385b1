package record_test

import (
	"testing"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
)

// A node's limits are recorded with it and read back; a start or restart
// from the record (no command, no limits given) takes them, and limits
// given replace the recorded ones whole, as --env does.
func TestRecordLimits(t *testing.T) {
	t.Parallel()
	rundir := t.TempDir()
	lim := nodes.Limits{NOFILE: "64:1024", Core: "0", MemoryMax: "536870912", CPUMax: "50000 100000"}
	ns, err := nodes.Spec{Names: []string{"w1"}, RunDir: rundir, Command: []string{"sleep", "300"}, Limits: lim}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	if err := record.Write(rundir, ns[0]); err != nil {
		t.Fatal(err)
	}
	rec, err := record.Read(rundir, "w1")
	if err != nil || rec.Limits != lim {
		t.Fatalf("read back: %+v, %v; want %+v", rec.Limits, err, lim)
	}
	got, err := record.Resolve(nodes.Spec{Names: []string{"w1"}, RunDir: rundir}, false, nil)
	if err != nil || got[0].Limits != lim {
		t.Errorf("resolved from the record: %+v, %v; want %+v", got[0].Limits, err, lim)
	}
	given := nodes.Limits{NPROC: "10"}
	got, err = record.Resolve(nodes.Spec{Names: []string{"w1"}, RunDir: rundir, Limits: given}, false, nil)
	if err != nil || got[0].Limits != given {
		t.Errorf("resolved with limits given: %+v, %v; want only those given, %+v", got[0].Limits, err, given)
	}
	got, err = record.Resolve(nodes.Spec{Names: []string{"w1"}, RunDir: rundir, Command: []string{"true"}}, false, nil)
	if err != nil || got[0].Limits != (nodes.Limits{}) {
		t.Errorf("resolved with a new command: %+v, %v; want none (a new command replaces the record)", got[0].Limits, err)
	}
}
