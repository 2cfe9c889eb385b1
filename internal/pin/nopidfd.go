//go:build !linux

package pin

// Off Linux: no pidfds, and start times only where /proc gives them.

import (
	"context"
	"os"
	"syscall"

	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/nodes"
)

// Identify returns what names the process pid for its node's record: its
// pid and start time where /proc gives one (elsewhere an error, and the
// record names no process).
func Identify(pid int) (nodes.Started, error) {
	p, err := proc.Read(pid)
	if err != nil {
		return nodes.Started{}, err
	}
	return nodes.Started{PID: pid, StartTicks: p.StartTicks}, nil
}

// RecordedRuns says whether the process st names runs: it cannot be
// checked here, so never.
func RecordedRuns(st nodes.Started) (proc.Stat, bool) { return proc.Stat{}, false }

// SignalLost would signal a lost process; without pidfds to pin it with,
// it does not (lost nodes are found only on Linux anyway).
func SignalLost(st nodes.Started, sig syscall.Signal) (bool, error) { return false, ErrNoPidfd }

// PidfdGone: there are no pidfds here to name a process.
func PidfdGone(f *os.File) bool { return true }

// WaitLost would wait for a lost process to exit.
func WaitLost(ctx context.Context, st nodes.Started) error { return ErrNoPidfd }

// PidfdInoOf: no pidfds here.
func PidfdInoOf(pid int) (uint64, bool) { return 0, false }

// SignalMember would signal a member of a node's session; without pidfds
// to pin it with, it is not signalled.
func SignalMember(m proc.Stat, st nodes.Started, sig syscall.Signal) (bool, error) {
	return false, ErrNoPidfd
}
