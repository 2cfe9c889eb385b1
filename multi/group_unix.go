//go:build unix && !linux

package multi

import (
	"syscall"

	"github.com/multi-launcher/multi/nodes"
)

// sendPinnedGroup has no pidfd here: it checks that pid leads its own
// process group and kills the group right after the caller's lock check.
func sendPinnedGroup(h *nodes.Handle, pid int, sig syscall.Signal) (bool, error) {
	if err := checkGroupLeader(pid); err != nil {
		return true, err
	}
	return true, killGroupChecked(pid, sig)
}
