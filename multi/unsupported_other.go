//go:build !unix

package multi

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// Nodes need sessions, POSIX record locks and exec: elsewhere every verb
// that starts or signals a node fails with errors.ErrUnsupported.

const maxSignal = 32

func signalName(sig syscall.Signal) string { return "" }

func isStopSignal(sig syscall.Signal) bool { return false }

func signalNum(name string) syscall.Signal {
	switch name {
	case "SIGTERM":
		return syscall.SIGTERM
	case "SIGKILL":
		return syscall.SIGKILL
	}
	return 0
}

func spawn(_ context.Context, n nodes.Node, env []string, lockTimeout time.Duration) (*child, error) {
	return nil, errors.ErrUnsupported
}

func (ch *child) recheck() error { return errors.ErrUnsupported }

func standbyStart(n nodes.Node) bool { return false }

func (ch *child) letGo(detach bool) {}

func signalNode(path string, expect int, sig syscall.Signal, group bool) (pidfile.Info, error) {
	return pidfile.Info{Path: path}, errors.ErrUnsupported
}

func signalKeep(path string, expect int, want nodes.Started, sig syscall.Signal, group, rw bool, dirs *pidfile.Folders, pin bool) (pidfile.Info, *pidfile.Handle, *os.File, error) {
	return pidfile.Info{Path: path}, nil, nil, errors.ErrUnsupported
}

func killHeld(h *pidfile.Handle, pidfd *os.File, path string, expect int, want nodes.Started, sig syscall.Signal, group bool) error {
	return errors.ErrUnsupported
}
