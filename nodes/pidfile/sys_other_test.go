//go:build !unix

package pidfile_test

import "errors"

// signalZero is kill(pid, 0), which only Unix has.
func signalZero(pid int) error { return errors.ErrUnsupported }

// mkfifo: no named pipes in the file system here.
func mkfifo(path string) error { return errors.ErrUnsupported }
