//go:build unix && !linux

package pin

import (
	"os"
	"syscall"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// maxSignal is the highest signal number on the BSDs and macOS.
const maxSignal = 32

// sendPinned has no pidfd to pin the process with here: it kills right after
// the caller's lock check, which is as close as kill(2) gets, once the
// holder is seen to be want, if want names a process ([ProcIs]).
func sendPinned(h *pidfile.Handle, p SafePID, want nodes.Started, sig syscall.Signal, cont, group bool, pin **os.File) (bool, error) {
	if want.PID != 0 && !ProcIs(int(p), want) {
		return true, NewHolderError(int(p), want)
	}
	return true, killUnpinned(p, sig, cont, group)
}

// signalPidfd is never given a pidfd here (sendPinned keeps none): the
// checked kill.
func signalPidfd(f *os.File, p SafePID, sig syscall.Signal, cont, group bool) error {
	return killUnpinned(p, sig, cont, group)
}
