//go:build !linux

package ready

import (
	"os/exec"

	"github.com/multi-launcher/multi/nodes"
)

// inScratch: cgroups are Linux's; the check's session is what is killed.
func inScratch(n nodes.Node, rundir string, cmd *exec.Cmd) (end func(), ok bool) {
	return func() {}, false
}
