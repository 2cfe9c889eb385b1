//go:build unix

package multi_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/multi-launcher/multi/multi"
)

// restart --rolling with MaxUnavailable K never has more than K nodes
// down at once, and does take them K at a time.
func TestRestartMaxUnavailable(t *testing.T) {
	t.Parallel()
	const k = 3
	names := make([]string, 10)
	for i := range names {
		names[i] = fmt.Sprintf("m%d", i+1)
	}
	c := cluster(t, "", names...)
	c.Settle = 50 * time.Millisecond
	if _, err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	most := 0
	signalledFn := func(r multi.Result) {
		mu.Lock()
		defer mu.Unlock()
		down := 1 // this one, on its way down
		for _, n := range c.Nodes {
			if n.Name != r.Node.Name && !locked(n) {
				down++
			}
		}
		most = max(most, down)
	}
	res, err := c.Restart(t.Context(), multi.RestartOptions{Rolling: true, MaxUnavailable: k,
		Stop: multi.StopOptions{Signalled: signalledFn}})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Outcome != multi.Restarted {
			t.Errorf("%s: %q", c.Nodes[i].Name, r)
		}
	}
	if most > k {
		t.Errorf("%d nodes down at once; want at most %d", most, k)
	}
}
