//go:build unix

package record_test

// Benchmarks of the records: reading 1000 and writing one. They measure;
// they assert no timing. `make bench` runs them (see docs/benchmarks.md).
// Set MULTI_BENCH_DIR to put their files on another filesystem than the
// temp dir's.

import (
	"path/filepath"
	"testing"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/nodes"
)

// benchDir: see [testutil.BenchDir].
var benchDir = testutil.BenchDir

// BenchmarkReadRecords1000 reads the records of 1000 nodes: what stopwait,
// status and restart do first when no names are given.
func BenchmarkReadRecords1000(b *testing.B) {
	dir := benchDir(b)
	ns, err := nodes.Spec{Names: []string{"1000"}, Host: "bench", RunDir: dir, Command: []string{"sleep", "300"}}.Nodes()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range ns {
		if err := record.Write(dir, n); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		if recs, err := record.ReadAll(dir); err != nil || len(recs) != 1000 {
			b.Fatal(len(recs), err)
		}
	}
}

// BenchmarkWriteRecord is start's record of one node: JSON, a temporary
// file, fsync, rename.
func BenchmarkWriteRecord(b *testing.B) {
	dir := benchDir(b)
	n := nodes.Node{Name: "w1", Host: "bench", Index: 1, PidFile: filepath.Join(dir, "w1.pid"),
		LogFile: filepath.Join(dir, "w1.log"), Command: []string{"sleep", "300"}}
	b.ResetTimer()
	for range b.N {
		if err := record.Write(dir, n); err != nil {
			b.Fatal(err)
		}
	}
}
