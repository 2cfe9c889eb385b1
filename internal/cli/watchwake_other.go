//go:build !linux

package cli

import "github.com/multi-launcher/multi/nodes"

// watchWake is a channel that never gets a value: the watch looks every
// interval (on Linux, inotify makes it look sooner).
func watchWake(string, []nodes.Node) (<-chan struct{}, func()) {
	return nil, func() {}
}
