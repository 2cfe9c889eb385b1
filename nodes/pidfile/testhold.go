package pidfile

import (
	"os"
	"strconv"
	"time"

	"github.com/multi-launcher/multi/internal/testhooks"
)

// Test-only environment variables, which hold open the windows in which
// one multi meets another's brief locks, so that tests of those windows
// are deterministic. They act only in test builds (package testhooks).
const (
	// testHoldEnv set to a path makes [Acquire] (so a node's exec step)
	// and [RemoveStale], right after taking their lock, write their pid to
	// PATH.held and wait until PATH exists (at most a minute) before they
	// go on.
	testHoldEnv = "_MULTI_TEST_HOLD_LOCK"
	// testBriefEnv set to a path makes a multi that waits out a brief
	// lock (see [BriefWait]) create PATH as it starts to wait, which can
	// end a [testHoldEnv] hold.
	testBriefEnv = "_MULTI_TEST_BRIEF_MARK"
)

// testHoldLock is the hook of [testHoldEnv].
func testHoldLock() {
	path := testhooks.Getenv(testHoldEnv)
	if path == "" {
		return
	}
	// Written whole, then renamed into place: a test that sees PATH.held
	// reads the pid, never an empty file.
	tmp := path + ".held.tmp"
	if os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644) == nil {
		os.Rename(tmp, path+".held")
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// testMarkBrief is the hook of [testBriefEnv], for a multi about to wait
// out a brief lock (see [BriefWaiter]).
func testMarkBrief() {
	if path := testhooks.Getenv(testBriefEnv); path != "" {
		touch(path)
	}
}

func touch(path string) {
	if f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644); err == nil {
		f.Close()
	}
}
