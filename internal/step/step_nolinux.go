//go:build unix && !linux

package step

// Every Unix but Linux: no /proc/self/comm to name the step, no way to
// set the mask the exec hands on, no close_range.

import (
	"errors"

	"golang.org/x/sys/unix"
)

// nameStep has nothing to do: the step is started by its program's path,
// which names it.
func nameStep() {}

// closeOnExecFrom3 is false: closeInherited marks each descriptor.
func closeOnExecFrom3() bool { return false }

// dup2 makes newfd a copy of oldfd.
func dup2(oldfd, newfd int) error { return unix.Dup2(oldfd, newfd) }

// unblockSignals has no portable way here to set the mask the exec
// hands on: a node keeps the signals its caller blocked.
func unblockSignals() {}

// RlimitResource knows no rlimit here: a node's limits are set on Linux
// only, and its start fails elsewhere, saying so.
func RlimitResource(name string) (int, bool) { return 0, false }

// hardLimit is never asked for here.
func hardLimit(resource int) uint64 { return ^uint64(0) }

// getrlimit is never asked here.
func getrlimit(resource int) (soft, hard uint64, ok bool) { return 0, 0, false }

// setrlimit is never called here.
func setrlimit(resource int, soft, hard uint64) error { return errors.ErrUnsupported }
