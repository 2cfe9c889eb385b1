package multi

import (
	"bytes"
	"fmt"

	"github.com/multi-launcher/multi/internal/runtag"
	"github.com/multi-launcher/multi/internal/safefs"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// statusFatal sets Fatal for each node of out that is down and that a
// live multi run gave up on (its fatal mark, see [runtag.FatalExt]).
func (c *call) statusFatal(out []Status) {
	for i := range out {
		s := &out[i]
		if s.Err != nil || s.Lost != nil || s.Stopping != 0 || s.State != pidfile.Absent && s.State != pidfile.Stale {
			continue
		}
		b, err := safefs.ReadMade(c.rundir(), s.Node.Name+runtag.FatalExt, 1024)
		if err != nil {
			continue
		}
		id, why, _ := bytes.Cut(b, []byte("\n"))
		if pid := runtag.Live(id); pid != 0 {
			s.Fatal = fmt.Sprintf("multi run (pid %d) gave up on it: %s", pid, nodes.Printable(string(bytes.TrimSpace(why))))
		}
	}
}
