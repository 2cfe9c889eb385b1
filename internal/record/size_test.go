package record_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
)

// A record too large to read back is never written; ReadRecords and
// Resolve skip one that is there, naming it, and read the others.
func TestRecordTooLarge(t *testing.T) {
	t.Parallel()
	rundir := t.TempDir()
	ns, err := nodes.Spec{Names: []string{"w1", "w2"}, RunDir: rundir, Command: []string{"sleep", "1"}}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	big := ns[0]
	for i := 0; i < 10; i++ {
		big.Env = append(big.Env, "K="+strings.Repeat("x", 120<<10))
	}
	if err := record.CheckSize(rundir, big); !errors.Is(err, nodes.ErrRecordTooLarge) {
		t.Errorf("CheckRecord: %v; want ErrRecordTooLarge", err)
	}
	if err := record.Write(rundir, big); !errors.Is(err, nodes.ErrRecordTooLarge) || !strings.Contains(err.Error(), record.Path(rundir, "w1")) {
		t.Errorf("WriteRecord: %v; want ErrRecordTooLarge naming the record", err)
	}
	if ents, _ := os.ReadDir(rundir); len(ents) != 0 {
		t.Errorf("rundir holds %v; want nothing written", ents)
	}
	if err := record.CheckSize(rundir, ns[1]); err != nil {
		t.Errorf("CheckRecord of a small record: %v", err)
	}
	if err := record.Write(rundir, ns[1]); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(record.Path(rundir, "w1"), []byte(strings.Repeat(" ", 2<<20)), 0o644)
	recs, err := record.ReadAll(rundir)
	if len(recs) != 1 || recs[0].Name != "w2" || err == nil || !strings.Contains(err.Error(), record.Path(rundir, "w1")) {
		t.Errorf("ReadRecords: %v, %v; want w2, and an error naming w1's record", recs, err)
	}
	for _, names := range [][]string{nil, {"w1", "w2"}} {
		var skipped []error
		got, err := record.Resolve(nodes.Spec{Names: names, RunDir: rundir}, false, func(err error) { skipped = append(skipped, err) })
		if err != nil || len(got) != len(names)+max(0, 1-len(names)) || len(skipped) != 1 {
			t.Errorf("Resolve %v: %v, %v, skipped %v; want the nodes, w1's record skipped once", names, got, err, skipped)
		}
	}
}
