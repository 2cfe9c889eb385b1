//go:build unix

package nodes_test

// Benchmarks of the hot paths in package nodes: the grammar expansion of
// 1000 nodes (the records' are in internal/record, the pidfile's in
// nodes/pidfile). They measure; they assert no timing. `make bench` runs
// them (see docs/benchmarks.md).

import (
	"fmt"
	"testing"

	"github.com/multi-launcher/multi/nodes"
)

// BenchmarkSpecNodes1000 is the grammar expansion of `multi start 1000 --
// CMD`: the count, names, and the pidfile, logfile and argv templates of
// every node, with the duplicate checks.
func BenchmarkSpecNodes1000(b *testing.B) {
	spec := nodes.Spec{Names: []string{"1000"}, Host: "bench", RunDir: "/run/multi",
		Command: []string{"celery", "-A", "proj", "worker", "-n", "%h", "--logfile=%n%I.log", "--port=80%i"}}
	b.ReportAllocs()
	for range b.N {
		ns, err := spec.Nodes()
		if err != nil || len(ns) != 1000 {
			b.Fatal(len(ns), err)
		}
	}
}

// BenchmarkSpecNodes1000Names is the same with 1000 names given one by
// one, as name@host.
func BenchmarkSpecNodes1000Names(b *testing.B) {
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprintf("w%d@h%d", i+1, i%7)
	}
	spec := nodes.Spec{Names: names, Host: "bench", RunDir: "/run/multi",
		PidFile: "/run/multi/%n.pid", LogFile: "/var/log/multi/%h.log",
		Command: []string{"sleep", "300"}}
	b.ReportAllocs()
	for range b.N {
		if ns, err := spec.Nodes(); err != nil || len(ns) != 1000 {
			b.Fatal(len(ns), err)
		}
	}
}
