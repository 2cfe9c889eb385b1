package multi

import (
	"fmt"

	"github.com/multi-launcher/multi/internal/runtag"
	"github.com/multi-launcher/multi/internal/safefs"
)

// A supervisedError refuses to start or restart a node a multi run
// supervises, naming the run's pid.
type supervisedError struct{ RunPID int }

func (e *supervisedError) Error() string {
	return fmt.Sprintf("%v (pid %d), which starts it again under its --on-exit policy: restart the run, not its node (kill -TERM %d stops the run and every node of its own), or multi stop the node and leave it down",
		ErrSupervised, e.RunPID, e.RunPID)
}

// Is makes a supervisedError match [ErrSupervised].
func (e *supervisedError) Is(target error) bool { return target == ErrSupervised }

// supervisor returns the pid of the multi run that supervises the node
// named name, from its run tag ("PID STARTTICKS"), or 0: no tag, a tag of
// this process's own run, or of a run no longer alive (killed, its tags
// left behind), which the start time tells from a process given its pid
// since, or from another pid namespace's (a run as a container's PID 1
// seen from the host). The pid is only named, never signalled: pid 1 (the
// run as a container's PID 1, seen from inside) is named like any other.
func (c *call) supervisor(name string) int {
	b, err := safefs.ReadMade(c.rundir(), name+runtag.Ext, 64)
	if err != nil {
		return 0
	}
	return runtag.Live(b)
}

// refuseSupervised fails each result whose node a multi run
// supervises, and says which it failed (the caller reports them).
func (c *call) refuseSupervised(op string, results []Result) []bool {
	refused := make([]bool, len(results))
	for i := range results {
		if pid := c.supervisor(results[i].Node.Name); pid != 0 {
			results[i].fail(op, &supervisedError{RunPID: pid})
			refused[i] = true
		}
	}
	return refused
}
