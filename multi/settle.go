package multi

import (
	"context"
	"time"

	"github.com/multi-launcher/multi/internal/launch"
)

// settleAll waits, once for the whole batch, until every started node is
// c.settle old; then finishStart checks that each still runs holding its
// lock, and a node that exited in the window fails with its exit status
// and its last log lines. It returns when the window is over, when every
// node of the batch has exited (nothing is left to settle: each has
// failed), or ctx is done (the nodes are then checked at once).
func (c *call) settleAll(ctx context.Context, kids []*launch.Child) {
	window := c.settle
	if window <= 0 {
		return
	}
	var last time.Time
	var live []*launch.Child
	for _, ch := range kids {
		if ch != nil {
			live = append(live, ch)
			if ch.Born().After(last) {
				last = ch.Born()
			}
		}
	}
	if len(live) == 0 {
		return
	}
	// One timer for the batch: the window ends when the youngest node is
	// old enough, and every older one is then older still.
	t := time.NewTimer(time.Until(last.Add(window)))
	defer t.Stop()
	// Looked at with a backoff, from the first node not yet seen exited:
	// one look a tick while they run.
	look := time.NewTimer(time.Millisecond)
	defer look.Stop()
	for delay, first := time.Millisecond, 0; ; delay = min(2*delay, settleLook) {
		for first < len(live) && live[first].Exited() {
			first++
		}
		if first == len(live) {
			return
		}
		look.Reset(delay)
		select {
		case <-t.C:
			return
		case <-ctx.Done():
			return
		case <-look.C:
		}
	}
}

// settleLook is the longest time between two looks, in the settle window,
// at whether every node of the batch has exited.
const settleLook = 50 * time.Millisecond
