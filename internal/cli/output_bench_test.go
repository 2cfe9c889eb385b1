package cli

import (
	"io"
	"strconv"
	"testing"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
)

// BenchmarkResults100 prints the lines of a start of 100 nodes: the last
// step of start before it returns, in the ready tail (docs/benchmarks.md).
func BenchmarkResults100(b *testing.B) {
	rs := make([]multi.Result, 100)
	for i := range rs {
		rs[i] = multi.Result{Node: nodes.Node{Name: "celery" + strconv.Itoa(i+1)}, Outcome: multi.Started, PID: 20000 + i}
	}
	o := &output{w: io.Discard, errw: io.Discard}
	b.ReportAllocs()
	for b.Loop() {
		o.results(rs)
	}
}
