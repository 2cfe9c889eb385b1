//go:build unix && !linux

package multi

import (
	"context"
	"syscall"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// maxSignal is the highest signal number on the BSDs and macOS.
const maxSignal = 32

// sendPinned has no pidfd to pin the process with here: it kills right after
// the caller's lock check, which is as close as kill(2) gets.
func sendPinned(h *pidfile.Handle, pid int, sig syscall.Signal, cont, group bool) (bool, error) {
	return true, killUnpinned(pid, sig, cont, group)
}

// signalLost would signal a lost process; without pidfds to pin it with,
// it does not (lost nodes are found only on Linux anyway).
func signalLost(st nodes.Started, sig syscall.Signal) (bool, error) { return false, errNoPidfd }

// waitLost would wait for a lost process to exit.
func waitLost(ctx context.Context, st nodes.Started) error { return errNoPidfd }
