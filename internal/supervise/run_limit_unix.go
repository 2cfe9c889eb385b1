//go:build unix

package supervise

import (
	"fmt"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/launch"
)

// crashLoop applies the crash-loop limit (supervisord's startretries,
// systemd's StartLimitBurst) to rn, which exited (ws, why) and would be
// restarted: past Options.MaxRestarts restarts within RestartWindow it
// is fatal, left down, and its exit status is the run's; the other nodes
// run on. It reports whether it is.
func (r *run) crashLoop(rn *runNode, ws syscall.WaitStatus, why error) bool {
	if r.o.MaxRestarts <= 0 {
		return false
	}
	now := time.Now()
	recent := rn.restarted[:0]
	for _, t := range rn.restarted {
		if now.Sub(t) < r.o.RestartWindow {
			recent = append(recent, t)
		}
	}
	rn.restarted = recent
	if len(recent) < r.o.MaxRestarts {
		rn.restarted = append(rn.restarted, now)
		return false
	}
	rn.fatal = true
	r.markFatal(rn, fmt.Sprintf("restarted %d times within %s (--max-restarts), and exited again (%s)",
		len(recent), r.o.RestartWindow, launch.DescribeExit(ws)))
	r.decide(launch.ExitCode(ws), fmt.Errorf("%s: %w (%d times within %s): %w", rn.n.Name, ErrFatal, len(recent), r.o.RestartWindow, why))
	r.logf("%s: fatal: restarted %d times within %s (--max-restarts), and exited again (%s); left down",
		rn.n.Name, len(recent), r.o.RestartWindow, launch.DescribeExit(ws))
	r.maybeEnd()
	return true
}
