package engine

import (
	"bytes"
	"fmt"

	"github.com/multi-launcher/multi/internal/supervise"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// statusFatal sets Fatal for each node of out that is down and that a
// live multi run gave up on (its fatal mark, see [supervise.FatalExt]).
func (c *Set) statusFatal(out []Status) {
	for i := range out {
		s := &out[i]
		if s.Err != nil || s.Lost != nil || s.Stopping != 0 || s.State != pidfile.Absent && s.State != pidfile.Stale {
			continue
		}
		b, err := nodes.ReadMade(c.rundir(), s.Node.Name+supervise.FatalExt, 1024)
		if err != nil {
			continue
		}
		id, why, _ := bytes.Cut(b, []byte("\n"))
		if pid := supervise.LiveRun(id); pid != 0 {
			s.Fatal = fmt.Sprintf("multi run (pid %d) gave up on it: %s", pid, nodes.Printable(string(bytes.TrimSpace(why))))
		}
	}
}
