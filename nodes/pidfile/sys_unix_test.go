//go:build unix

package pidfile_test

import "syscall"

// signalZero is kill(pid, 0): whether a process (zombies too) has pid.
func signalZero(pid int) error { return syscall.Kill(pid, 0) }

// mkfifo makes a named pipe, a hostile pidfile.
func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }
