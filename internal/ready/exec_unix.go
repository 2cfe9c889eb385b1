//go:build unix

package ready

import (
	"os/exec"
	"syscall"

	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/nodes"
)

// ownSession makes an exec check's command the leader of a session of
// its own, by which what it forks is found (killLeft).
func ownSession(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// killLeft SIGKILLs what is left of the session of pid, an exec check's
// command that has been waited for, of processes started no earlier than
// since (boot ticks, read before it started): [pin.KillSession].
func killLeft(pid int, since uint64) {
	if pid > 1 && since != 0 {
		pin.KillSession(nodes.Started{PID: pid, StartTicks: since})
	}
}
