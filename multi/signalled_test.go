package multi_test

import (
	"sync"
	"testing"

	"github.com/multi-launcher/multi/multi"
)

// Signalled names each node StopWait signalled, with its pid, before the
// node's final result: what a caller needs to show what is waited for.
func TestSignalledBeforeWait(t *testing.T) {
	t.Parallel()
	c := cluster(t, "", "w1", "w2")
	if _, err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	pids := map[string]int{"w1": holderOf(t, c.Nodes[0]), "w2": holderOf(t, c.Nodes[1])}
	var mu sync.Mutex
	var events []string
	signalled := func(r multi.Result) {
		mu.Lock()
		defer mu.Unlock()
		if r.PID != pids[r.Node.Name] {
			t.Errorf("Signalled(%s) pid %d; want %d", r.Node.Name, r.PID, pids[r.Node.Name])
		}
		events = append(events, "signalled "+r.Node.Name)
	}
	c.Progress = func(r multi.Result) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, "done "+r.Node.Name)
	}
	if _, err := c.StopWait(t.Context(), multi.StopOptions{Signalled: signalled}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range events {
		seen[e] = true
		if e == "done w1" && !seen["signalled w1"] || e == "done w2" && !seen["signalled w2"] {
			t.Errorf("%s before its Signalled call: %q", e, events)
		}
	}
	if !seen["signalled w1"] || !seen["signalled w2"] || len(events) != 4 {
		t.Errorf("events %q; want each node signalled, then done", events)
	}
}
