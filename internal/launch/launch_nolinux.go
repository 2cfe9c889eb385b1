//go:build unix && !linux

package launch

// Every Unix but Linux: no pidfd to reap on, no task limits read.

import (
	"errors"
	"os/exec"
)

// reap collects the exit status of a node this process started, when it
// exits, so that a long-running orchestrator does not fill up with zombies.
func reap(cmd *exec.Cmd) { go cmd.Wait() }

// exited would report whether the child pid has exited without reaping it.
// Without waitid's WNOWAIT everywhere, it says no: the caller then sends
// SIGKILL to its own unreaped child, which does nothing to one that exited,
// and tells the two apart from the exit status.
func exited(pid int) bool { return false }

// waitable: as exited.
func waitable(pid int) bool { return false }

// taskRoom would say how many more tasks this process may make; only
// Linux's limits (cgroups, RLIMIT_NPROC counted per uid) are read, so
// here none is known, and a fork refused for want of one still fails its
// node with [TaskLimitError].
func taskRoom() (room int, limit string, ok bool) { return 0, "", false }

// SetSubreaper: only Linux has child subreapers (FreeBSD's procctl
// PROC_REAP_ACQUIRE is not used): orphans go to PID 1 as usual.
func SetSubreaper() (restore func(), err error) { return func() {}, errors.ErrUnsupported }
