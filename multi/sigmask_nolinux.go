//go:build unix && !linux

package multi

// unblockSignals has no portable way here to set the mask the exec
// hands on: a node keeps the signals its caller blocked.
func unblockSignals() {}
