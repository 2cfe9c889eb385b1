package pidfile

import "github.com/multi-launcher/multi/internal/testhooks"

// testHoldLock runs the tests' hook (nil in production; package
// testhooks) right after a lock is taken.
func testHoldLock() {
	if h := testhooks.HoldLock; h != nil {
		h()
	}
}

// testMarkBrief runs the tests' hook (nil in production; package
// testhooks) for a multi about to wait out a brief lock (see BriefWait).
func testMarkBrief() {
	if h := testhooks.MarkBrief; h != nil {
		h()
	}
}
