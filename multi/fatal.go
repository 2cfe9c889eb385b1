package multi

import (
	"bytes"
	"fmt"

	"github.com/multi-launcher/multi/internal/runtag"
	"github.com/multi-launcher/multi/internal/safefs"
	"github.com/multi-launcher/multi/nodes"
)

// fatal says why a live multi run gave up on n, which is down, from its
// fatal mark (see [runtag.FatalExt]); "" when none did.
func (c *call) fatal(n nodes.Node) string {
	b, err := safefs.ReadMade(c.rundir(), n.Name+runtag.FatalExt, 1024)
	if err != nil {
		return ""
	}
	id, why, _ := bytes.Cut(b, []byte("\n"))
	if pid := runtag.Live(id); pid != 0 {
		return fmt.Sprintf("multi run (pid %d) gave up on it: %s", pid, nodes.Printable(string(bytes.TrimSpace(why))))
	}
	return ""
}
