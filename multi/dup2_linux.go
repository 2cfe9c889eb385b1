package multi

import "golang.org/x/sys/unix"

// dup2 makes newfd a copy of oldfd (dup3(2): linux/arm64 has no dup2).
func dup2(oldfd, newfd int) error { return unix.Dup3(oldfd, newfd, 0) }
