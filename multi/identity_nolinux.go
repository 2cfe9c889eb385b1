//go:build !linux

package multi

import "github.com/multi-launcher/multi/nodes"

// identify returns what names the process pid for its node's record: its
// pid and start time where /proc gives one (elsewhere an error, and the
// record names no process).
func identify(pid int) (nodes.Started, error) {
	p, err := nodes.ReadProc(pid)
	if err != nil {
		return nodes.Started{}, err
	}
	return nodes.Started{PID: pid, StartTicks: p.StartTicks}, nil
}

// recordedRuns says whether the process st names runs: it cannot be
// checked here, so never.
func recordedRuns(st nodes.Started) (nodes.Proc, bool) { return nodes.Proc{}, false }
