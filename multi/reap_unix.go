//go:build unix && !linux

package multi

import (
	"os/exec"

	"golang.org/x/sys/unix"
)

// reap collects the exit status of a node this process started, when it
// exits, so that a long-running orchestrator does not fill up with zombies.
func reap(cmd *exec.Cmd) { go cmd.Wait() }

// dup2 makes newfd a copy of oldfd.
func dup2(oldfd, newfd int) error { return unix.Dup2(oldfd, newfd) }
