//go:build unix && !linux

package multi

import (
	"os"
	"syscall"

	"github.com/multi-launcher/multi/nodes/pidfile"
)

// maxSignal is the highest signal number on the BSDs and macOS.
const maxSignal = 32

// sendPinned has no pidfd to pin the process with here: it kills right after
// the caller's lock check, which is as close as kill(2) gets.
func sendPinned(h *pidfile.Handle, p safePID, sig syscall.Signal, cont, group bool, pin **os.File) (bool, error) {
	return true, killUnpinned(p, sig, cont, group)
}

// signalPidfd is never given a pidfd here (sendPinned keeps none): the
// checked kill.
func signalPidfd(f *os.File, p safePID, sig syscall.Signal, cont, group bool) error {
	return killUnpinned(p, sig, cont, group)
}
