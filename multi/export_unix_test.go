//go:build unix

package multi

import "syscall"

// Internals the tests in package multi_test drive directly.
var Confirm = confirm

// SignalNode is signalNode, returning the pid it signalled (or found).
func SignalNode(path string, expect int, sig syscall.Signal, group bool) (int, error) {
	info, err := signalNode(path, expect, sig, group)
	return info.PID, err
}

// SetTestHookBeforePin sets the hook that runs between the lock test that
// names a holder and the pidfd that pins it, until the returned func.
func SetTestHookBeforePin(f func(pid int)) (restore func()) {
	testHookBeforePin = f
	return func() { testHookBeforePin = nil }
}

// KillHeld is killHeld: a SIGKILL round's signal on a handle and a pidfd
// kept from the first signal.
var KillHeld = killHeld
