package engine

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/internal/supervise"
	"github.com/multi-launcher/multi/nodes"
)

// ErrSupervised: the node is one a multi run supervises (its run tag
// names a run that is alive): a start or restart from elsewhere is
// refused, since a node started outside the run would outlive it.
var ErrSupervised = errors.New("supervised by multi run")

// A SupervisedError refuses to start or restart a node a multi run
// supervises, naming the run's pid.
type SupervisedError struct{ RunPID int }

func (e *SupervisedError) Error() string {
	return fmt.Sprintf("%v (pid %d), which starts it again under its --on-exit policy: restart the run, not its node (kill -TERM %d stops the run and every node of its own), or multi stop the node and leave it down",
		ErrSupervised, e.RunPID, e.RunPID)
}

// Is makes a SupervisedError match [ErrSupervised].
func (e *SupervisedError) Is(target error) bool { return target == ErrSupervised }

// supervisor returns the pid of the multi run that supervises the node
// named name, from its run tag ("PID STARTTICKS"), or 0: no tag, a tag of
// this process's own run, or of a run no longer alive (killed, its tags
// left behind), which the start time tells from a process given its pid
// since, or from another pid namespace's (a run as a container's PID 1
// seen from the host). The pid is only named, never signalled: pid 1 (the
// run as a container's PID 1, seen from inside) is named like any other.
func (c *Set) supervisor(name string) int {
	b, err := nodes.ReadMade(c.rundir(), name+supervise.TagExt, 64)
	if err != nil {
		return 0
	}
	return liveRun(b)
}

// liveRun is the pid of the run a run id names ("PID STARTTICKS INO",
// see supervisor), 0 if it is not alive or is this process.
func liveRun(b []byte) int {
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return 0
	}
	p, err := nodes.ReadProc(pid)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return pid // no /proc: taken for alive
	case err != nil, p.Gone():
		return 0
	}
	if len(f) > 2 {
		// The pidfd's inode names one process for good; where the
		// kernel gives one, it decides.
		if ino, err := strconv.ParseUint(f[2], 10, 64); err == nil {
			if now, ok := pin.PidfdInoOf(pid); ok {
				if now != ino {
					return 0 // another process now has the pid
				}
				return pid
			}
		}
	}
	if len(f) > 1 && f[1] != strconv.FormatUint(p.StartTicks, 10) {
		return 0 // another process now has the pid
	}
	return pid
}

// refuseSupervised fails each result whose node a multi run
// supervises, and says which it failed (the caller reports them).
func (c *Set) refuseSupervised(op string, results []Result) []bool {
	refused := make([]bool, len(results))
	for i := range results {
		if pid := c.supervisor(results[i].Node.Name); pid != 0 {
			results[i].fail(op, &SupervisedError{RunPID: pid})
			refused[i] = true
		}
	}
	return refused
}
