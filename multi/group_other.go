//go:build !unix

package multi

import (
	"errors"
	"syscall"

	"github.com/multi-launcher/multi/nodes"
)

func signalNode(path string, expect int, sig syscall.Signal, group bool) (nodes.Info, error) {
	return nodes.Info{Path: path}, errors.ErrUnsupported
}
