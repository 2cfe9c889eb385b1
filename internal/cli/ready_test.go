package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/multi-launcher/multi/nodes"
)

// While start waits for readiness checks, the progress line names the
// nodes still waited for, in the set's order.
func TestProgressNamesNodesNotReady(t *testing.T) {
	t.Parallel()
	ns := []nodes.Node{{Name: "w1", Ready: nodes.ReadyCheck{Kind: nodes.Notify}}, {Name: "w2", Ready: nodes.ReadyCheck{Kind: nodes.Notify}}, {Name: "w10", Ready: nodes.ReadyCheck{Kind: nodes.Notify}}}
	if !readyWaits("start", ns) || readyWaits("start", []nodes.Node{{Name: "w1"}}) || readyWaits("stop", ns) {
		t.Fatal("readyWaits: want true only for a start of nodes with a check")
	}
	now := time.Now()
	p := &progressLine{verb: "start", total: 3, begin: now.Add(-2 * time.Second), readyWait: true,
		index: map[string]int{"w1": 0, "w2": 1, "w10": 2}, left: map[string]bool{"w10": true, "w1": true}, done: 1}
	if got, want := p.text(now), "start: 1/3 ready, 2s; waiting for w1 w10"; got != want {
		t.Errorf("text = %q; want %q", got, want)
	}
	p.done, p.left = 3, map[string]bool{}
	if got := p.text(now); !strings.HasPrefix(got, "start: 3/3 started") {
		t.Errorf("text once all are done = %q", got)
	}
}
