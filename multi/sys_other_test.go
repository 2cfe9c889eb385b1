//go:build !unix

package multi_test

import (
	"os"
	"syscall"
)

// killGroup kills a leftover node in a test's cleanup; without process
// groups, just the node.
func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

// unixSignals: none here.
var unixSignals = map[string]syscall.Signal{}
