//go:build !unix

package pin

import "syscall"

// unixSignals: none here.
var unixSignals = map[string]syscall.Signal{}
