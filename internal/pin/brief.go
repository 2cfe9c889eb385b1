package pin

import (
	"time"

	"github.com/multi-launcher/multi/internal/testhooks"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// A briefWaiter waits out, a little longer each time, a lock that may be
// another multi's brief one (an OFD lock, or an exec step that has not
// written its pid yet), for [pidfile.BriefWait] in all. Its zero value is
// ready to use.
type briefWaiter struct {
	t0   time.Time
	wait time.Duration
}

// Wait sleeps before the caller looks at the lock again (50µs, doubling up
// to 10ms) and reports true, or reports false without sleeping once
// [pidfile.BriefWait] has passed since the first Wait.
func (b *briefWaiter) Wait() bool {
	if b.t0.IsZero() {
		b.t0, b.wait = time.Now(), 50*time.Microsecond
	}
	if time.Since(b.t0) > pidfile.BriefWait {
		return false
	}
	if h := testhooks.MarkBrief; h != nil {
		h()
	}
	time.Sleep(b.wait)
	b.wait = min(2*b.wait, 10*time.Millisecond)
	return true
}
