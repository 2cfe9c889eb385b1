package multi

import (
	"testing"

	"github.com/multi-launcher/multi/internal/engine"
)

// The engine's results become multi's with one allocation, the slice,
// whatever their count: a stop of 1000 nodes converts them between the
// last node's death and the command's return.
func TestResultsConvertWithoutAllocatingPerNode(t *testing.T) {
	rs := make([]engine.Result, 1000)
	for i := range rs {
		rs[i].PID = 100 + i
	}
	if n := testing.AllocsPerRun(10, func() { results(rs, nil) }); n > 1 {
		t.Fatalf("results of 1000 allocated %.0f times, want 1 (the slice)", n)
	}
}
