// Package testhooks holds the points at which tests hold open the
// windows of a start, a record write or a lock: function variables that
// production code calls when they are set, and that are nil unless a
// test sets them. [Enable] sets the environment-driven ones (the
// _MULTI_TEST_* variables), whose code lives in this package alone: it
// runs only in a binary built with -tags multitest (the integration
// tests build multi so) or in a test binary that calls Enable, and a
// production build, which never calls Enable, links none of it.
package testhooks

// The hook points. Production code calls each only when it is set.
var (
	// HoldLock runs right after pidfile.Acquire (so a node's exec step)
	// or pidfile.RemoveStale takes its lock.
	HoldLock func()
	// MarkBrief runs as a multi starts to wait out another's brief lock.
	MarkBrief func()
	// RecordWait runs in record.Write once its temp file exists.
	RecordWait func()
	// StepWait runs in a node's exec step, its pidfile locked, before
	// the logfile is opened.
	StepWait func()
	// StepDriven reports whether a start with the environment env drives
	// a hook that runs in the exec step (a node started so goes through
	// it).
	StepDriven func(env []string) bool

	// BeforePin runs between the lock test (or the look at /proc, for a
	// member of a node's session) that named pid and the pidfd that pins
	// it, before a signal.
	BeforePin func(pid int)
	// OnItsWay runs as a stop begins to wait for pid, a process on its
	// way out that let go of its lock.
	OnItsWay func(pid int)
	// SelfLockUnheld runs when a start has seen the lock of a
	// self-locking node not held by its process pid, before it asks
	// whether pid exited.
	SelfLockUnheld func(pid int)
)
