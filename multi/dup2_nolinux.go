//go:build unix && !linux

package multi

import "golang.org/x/sys/unix"

// dup2 makes newfd a copy of oldfd.
func dup2(oldfd, newfd int) error { return unix.Dup2(oldfd, newfd) }
