//go:build !unix

package multi

import (
	"errors"
	"syscall"
)

func signalNode(path string, expect int, sig syscall.Signal, group bool) (int, error) {
	return 0, errors.ErrUnsupported
}
