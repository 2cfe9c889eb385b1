//go:build !unix

package pin

import (
	"errors"
	"os"
	"syscall"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// Off Unix there are no sessions and no POSIX record locks: nothing is
// signalled; every call fails with errors.ErrUnsupported.

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

func SignalNode(path string, expect int, sig syscall.Signal, group bool) (pidfile.Info, error) {
	return pidfile.Info{Path: path}, errors.ErrUnsupported
}

func SignalKeep(path string, expect int, want nodes.Started, sig syscall.Signal, group, rw bool, dirs *pidfile.Folders, pin bool) (pidfile.Info, *pidfile.Handle, *os.File, error) {
	return pidfile.Info{Path: path}, nil, nil, errors.ErrUnsupported
}

func KillHeld(h *pidfile.Handle, pidfd *os.File, path string, expect int, want nodes.Started, sig syscall.Signal, group bool) error {
	return errors.ErrUnsupported
}
