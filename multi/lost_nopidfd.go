//go:build !linux

package multi

import (
	"context"
	"os"
	"syscall"

	"github.com/multi-launcher/multi/nodes"
)

// signalLost would signal a lost process; without pidfds to pin it with,
// it does not (lost nodes are found only on Linux anyway).
func signalLost(st nodes.Started, sig syscall.Signal) (bool, error) { return false, errNoPidfd }

// pidfdGone: there are no pidfds here to name a process.
func pidfdGone(f *os.File) bool { return true }

// waitLost would wait for a lost process to exit.
func waitLost(ctx context.Context, st nodes.Started) error { return errNoPidfd }
