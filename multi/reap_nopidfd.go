//go:build unix && !linux

package multi

// Every unix but Linux: no pidfd to wait on, no waitid WNOWAIT everywhere.

import "os/exec"

// reap collects the exit status of a node this process started, when it
// exits, so that a long-running orchestrator does not fill up with zombies.
func reap(cmd *exec.Cmd) { go cmd.Wait() }

// exited would report whether the child pid has exited without reaping it.
// Without waitid's WNOWAIT everywhere, it says no: the caller then sends
// SIGKILL to its own unreaped child, which does nothing to one that exited,
// and tells the two apart from the exit status.
func exited(pid int) bool { return false }
