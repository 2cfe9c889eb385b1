//go:build unix

package multi

import "github.com/multi-launcher/multi/internal/testhooks"

// SetTestHookSelfLockUnheld sets the hook that runs when Start, waiting
// for a self-locking node pid to take its lock, has seen it not held, until
// the returned func.
func SetTestHookSelfLockUnheld(f func(pid int)) (restore func()) {
	testhooks.SelfLockUnheld = f
	return func() { testhooks.SelfLockUnheld = nil }
}

// SetTestHookOnItsWay sets the hook that runs as multi begins to wait for
// a process that let go of its node's lock to exit, until the returned
// func.
func SetTestHookOnItsWay(f func(pid int)) (restore func()) {
	testhooks.OnItsWay = f
	return func() { testhooks.OnItsWay = nil }
}
