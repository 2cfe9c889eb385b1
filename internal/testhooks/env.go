package testhooks

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The environment variables of the hooks that [Enable] sets.
const (
	// EnvHoldLock set to a path makes [HoldLock] write this process's
	// pid to PATH.held and wait until PATH exists (at most a minute).
	EnvHoldLock = "_MULTI_TEST_HOLD_LOCK"
	// EnvBriefMark set to a path makes [MarkBrief] create PATH, which
	// can end an [EnvHoldLock] hold.
	EnvBriefMark = "_MULTI_TEST_BRIEF_MARK"
	// EnvRecordWait names a FIFO that the first [RecordWait] of a
	// process opens, and so waits on: only the first, as a start writes
	// the record again once its node runs.
	EnvRecordWait = "_MULTI_TEST_RECORD_WAIT"
	// EnvStepWait names a FIFO that a node's exec step ([StepWait]) opens, and so waits on, its pidfile locked:
	// tests kill multi start there. The node never sees it.
	EnvStepWait = "_MULTI_TEST_STEP_WAIT"
)

var enableOnce sync.Once

// Enable sets the hooks that the _MULTI_TEST_* environment variables
// drive, in this process. Only test code calls it (and a multitest
// build), from a package-level variable's initializer of a _test.go
// file, so that they are set before any init function runs (the exec
// step runs from one).
func Enable() {
	enableOnce.Do(func() {
		HoldLock = holdLock
		MarkBrief = func() { touch(os.Getenv(EnvBriefMark)) }
		RecordWait = recordWait
		StepWait = stepWait
		StepDriven = stepDriven
	})
}

func holdLock() {
	path := os.Getenv(EnvHoldLock)
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

var recordOnce sync.Once

func recordWait() {
	recordOnce.Do(func() { openFIFO(os.Getenv(EnvRecordWait)) })
}

func stepWait() {
	p := os.Getenv(EnvStepWait)
	os.Unsetenv(EnvStepWait) // the node's environment is this process's
	openFIFO(p)
}

// openFIFO opens path for writing, which waits for a reader when it is a
// FIFO, and closes it; "" does nothing.
func openFIFO(path string) {
	if path == "" {
		return
	}
	if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
		f.Close()
	}
}

func touch(path string) {
	if path == "" {
		return
	}
	if f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644); err == nil {
		f.Close()
	}
}

// stepDriven reports whether env, or this process's environment, sets a
// hook's variable.
func stepDriven(env []string) bool {
	for _, vars := range [][]string{env, os.Environ()} {
		for _, kv := range vars {
			if strings.HasPrefix(kv, "_MULTI_TEST_") {
				return true
			}
		}
	}
	return false
}
