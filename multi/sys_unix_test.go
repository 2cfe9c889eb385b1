//go:build unix

package multi_test

import "syscall"

// killGroup SIGKILLs the process group a leftover node leads (it ran
// setsid), in a test's cleanup.
func killGroup(pid int) { syscall.Kill(-pid, syscall.SIGKILL) }
