package engine

import (
	"context"
	"time"

	"github.com/multi-launcher/multi/internal/launch"
)

// settle is the settle window: Settle, which package multi resolves (its
// DefaultSettle for 0); 0 or less is none.
func (c *Set) settle() time.Duration { return max(c.Settle, 0) }

// settleAll waits, once for the whole batch, until every started node is
// c.settle() old; then finishStart checks that each still runs holding its
// lock, and a node that exited in the window fails with its exit status
// and its last log lines. It returns when the window is over, or ctx is
// done (the nodes are then checked at once).
func (c *Set) settleAll(ctx context.Context, kids []*launch.Child) {
	window := c.settle()
	if window <= 0 {
		return
	}
	var last time.Time
	for _, ch := range kids {
		if ch != nil && ch.Born().After(last) {
			last = ch.Born()
		}
	}
	if last.IsZero() {
		return
	}
	// One timer for the batch: the window ends when the youngest node is
	// old enough, and every older one is then older still.
	t := time.NewTimer(time.Until(last.Add(window)))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
