//go:build !unix

package ready

import "os/exec"

// ownSession: no sessions off Unix.
func ownSession(cmd *exec.Cmd) {}

// killLeft: no sessions off Unix.
func killLeft(pid int, since uint64) {}
