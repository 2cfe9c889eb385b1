//go:build !unix

package multi_test

import (
	"os"
)

// killGroup kills a leftover node in a test's cleanup; without process
// groups, just the node.
func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}
