//go:build unix

package multi

import (
	"os"
	"syscall"

	"github.com/multi-launcher/multi/internal/launch"

	"github.com/multi-launcher/multi/internal/pin"

	"github.com/multi-launcher/multi/internal/testhooks"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// Internals the tests in package multi_test drive directly.

// ErrNotRunning is what the signal path finds when nothing holds a lock.
var ErrNotRunning = pin.ErrNotRunning

// ExitCode is the exit code a failed start gives a run.
var ExitCode = launch.ErrExitCode

// SignalNode is pin.SignalNode, returning the pid it signalled (or found).
func SignalNode(path string, expect int, sig syscall.Signal, group bool) (int, error) {
	info, err := pin.SignalNode(path, expect, sig, group)
	return info.PID, err
}

// SetTestHookBeforePin sets the hook that runs between the lock test that
// names a holder and the pidfd that pins it, until the returned func.
func SetTestHookBeforePin(f func(pid int)) (restore func()) {
	testhooks.BeforePin = f
	return func() { testhooks.BeforePin = nil }
}

// KillHeld is pin.KillHeld, with no record to check the holder against: a
// SIGKILL round's signal on a handle and a pidfd kept from the first
// signal.
func KillHeld(h *pidfile.Handle, pidfd *os.File, path string, expect int, sig syscall.Signal, group bool) error {
	return pin.KillHeld(h, pidfd, path, expect, nodes.Started{}, sig, group)
}

// KillHeldRecorded is pin.KillHeld with the process the node's record names,
// want, to check the holder against.
var KillHeldRecorded = pin.KillHeld
