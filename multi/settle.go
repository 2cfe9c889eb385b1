package multi

import (
	"context"
	"time"

	"github.com/multi-launcher/multi/internal/launch"
)

// DefaultSettle is the settle window when [Cluster.Settle] is zero: long
// enough for a command that fails on a bad option, a missing file or a
// taken port to be seen exiting, short enough that a batch, which pays it
// once, hardly notices. supervisord's startsecs is 1 s, per program.
const DefaultSettle = 300 * time.Millisecond

func (c *Cluster) settle() time.Duration {
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
func (c *Cluster) settleAll(ctx context.Context, kids []*launch.Child) {
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
