package engine

import (
	"context"
	"time"

	"github.com/multi-launcher/multi/internal/launch"
)

// DefaultSettle is package multi's DefaultSettle.
const DefaultSettle = 300 * time.Millisecond

func (c *Set) settle() time.Duration {
	switch {
	case c.Settle == 0:
		return DefaultSettle
	case c.Settle < 0:
		return 0
	}
	return c.Settle
}

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
