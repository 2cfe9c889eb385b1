package ready

import (
	"os/exec"

	"github.com/multi-launcher/multi/internal/cgroup"
	"github.com/multi-launcher/multi/nodes"
)

// inScratch makes cmd, an exec check's command for n (recorded in
// rundir), start in a cgroup folder beside n's own, where n has one, and
// returns what ends that: whatever is left in the folder, a daemon that
// left the check's session included, killed, and the folder removed. ok
// is false, and cmd unchanged, where n has no cgroup or the folder could
// not be made.
func inScratch(n nodes.Node, rundir string, cmd *exec.Cmd) (end func(), ok bool) {
	if n.Cgroup == "" || rundir == "" {
		return func() {}, false
	}
	s, err := cgroup.MakeScratch(n.Cgroup, rundir, n.Name)
	if err != nil {
		return func() {}, false
	}
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, s.FD()
	return func() { s.Close() }, true
}
