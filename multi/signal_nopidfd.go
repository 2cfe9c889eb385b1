//go:build unix && !linux

package multi

import (
	"syscall"

	"github.com/multi-launcher/multi/nodes/pidfile"
)

// maxSignal is the highest signal number on the BSDs and macOS.
const maxSignal = 32

// sendPinned has no pidfd to pin the process with here: it kills right after
// the caller's lock check, which is as close as kill(2) gets.
func sendPinned(h *pidfile.Handle, p safePID, sig syscall.Signal, cont, group bool) (bool, error) {
	return true, killUnpinned(p, sig, cont, group)
}
