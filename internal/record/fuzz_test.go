package record_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
)

// FuzzReadRecord writes fuzzed bytes as a node record and reads it, alone,
// with every record of the rundir, and through Resolve, as later commands
// do. Nothing may panic, and a record that reads without error names its
// node, has absolute pidfile and logfile paths, and no more options than
// command words. Seeds: testdata/fuzz/FuzzReadRecord.
func FuzzReadRecord(f *testing.F) {
	for _, s := range []string{
		`{"name":"w1","host":"h","index":1,"command":["sleep","300"],"pidfile":"/r/w1.pid","logfile":"/r/w1.log"}`,
		`{"name":"w1","command":["a","-x"],"options":["-x"],"pidfile":"/r/w1.pid","logfile":"/r/w1.log"}`,
		`{"name":"w1","command":["a"],"options":["-x","-y"],"pidfile":"/r/w1.pid","logfile":"/r/w1.log"}`,
		`{"name":"w1","command":[],"options":[],"pidfile":"/r/w1.pid","logfile":"/r/w1.log"}`,
		`{"name":"w2","pidfile":"/r/w1.pid","logfile":"/r/w1.log"}`,
		`{"name":"w1","pidfile":"rel.pid","logfile":"/r/w1.log"}`,
		`{"name":"w1","index":-9223372036854775808,"pidfile":"/r/\u0000","logfile":"/r/w1.log","dir":"rel"}`,
		`{"name":"w1","pidfile":"/r/w1.pid","logfile":"/r/w1.log","command":null,"options":null}`,
		`[]`, `null`, ``, `{`, `{"name":1}`,
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		rundir := filepath.Join(dir, "run")
		os.RemoveAll(rundir)
		if err := os.MkdirAll(rundir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(record.Path(rundir, "w1"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		n, err := record.Read(rundir, "w1")
		if err == nil {
			if n.Name != "w1" || !filepath.IsAbs(n.PidFile) || !filepath.IsAbs(n.LogFile) || len(n.Options) > len(n.Command) {
				t.Fatalf("ReadRecord(%q) = %+v", b, n)
			}
		}
		record.ReadAll(rundir)
		record.Resolve(nodes.Spec{Names: []string{"w1"}, RunDir: rundir}, false, nil)
		record.Resolve(nodes.Spec{RunDir: rundir}, false, nil)
	})
}
