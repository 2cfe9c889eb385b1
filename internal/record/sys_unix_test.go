//go:build unix

package record_test

import "syscall"

// mkfifo makes a named pipe, a hostile record.
func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }
