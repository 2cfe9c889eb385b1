//go:build !unix

package multi

import (
	"errors"
	"syscall"

	"github.com/multi-launcher/multi/nodes/pidfile"
)

func signalNode(path string, expect int, sig syscall.Signal, group bool) (pidfile.Info, error) {
	return pidfile.Info{Path: path}, errors.ErrUnsupported
}
