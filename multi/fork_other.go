//go:build unix && !(linux && amd64)

package multi

import "github.com/multi-launcher/multi/nodes"

// spawnFork is the fork path of Linux (spawn_fork_linux.go); here every
// node starts through the exec step.
func spawnFork(n nodes.Node, env []string) (*child, error, bool) { return nil, nil, false }
