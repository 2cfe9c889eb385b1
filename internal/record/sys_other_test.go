//go:build !unix

package record_test

import "errors"

// mkfifo: no named pipes in the file system here.
func mkfifo(path string) error { return errors.ErrUnsupported }
