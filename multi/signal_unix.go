//go:build unix

package multi

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/multi-launcher/multi/nodes"
	"golang.org/x/sys/unix"
)

func signalName(sig syscall.Signal) string { return unix.SignalName(sig) }
func signalNum(name string) syscall.Signal { return unix.SignalNum(name) }

// signalHolder sends sig to the process that holds the lock on the pidfile
// at path, and returns its pid. The holder is read from the kernel just
// before the signal; a pidfile nobody has locked gives ErrNotRunning and no
// signal. If expect is positive, only that pid is signalled: a lock now
// held by another process means the awaited one is gone.
func signalHolder(path string, expect int, sig syscall.Signal) (int, error) {
	h, err := nodes.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, ErrNotRunning
	}
	if err != nil {
		return 0, err
	}
	defer func() { h.Close() }()
	for try := 0; try < 100; try++ {
		state, pid, err := h.Holder()
		if err != nil {
			return 0, err
		}
		switch state {
		case nodes.Stale:
			if h.SameFile() {
				return 0, ErrNotRunning
			}
			// Replaced since we opened it: look at the new file.
			h.Close()
			if h, err = nodes.Open(path); errors.Is(err, fs.ErrNotExist) {
				return 0, ErrNotRunning
			} else if err != nil {
				return 0, err
			}
			continue
		case nodes.Elsewhere:
			return 0, ErrElsewhere
		}
		if expect > 0 && pid != expect {
			return 0, ErrNotRunning
		}
		if err := checkPID(pid); err != nil {
			return 0, err
		}
		sent, err := sendPinned(h, pid, sig)
		if err != nil {
			return pid, fmt.Errorf("signal %s to pid %d: %w", SignalName(sig), pid, err)
		}
		if sent {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("pidfile %s: the lock holder keeps changing", path)
}

// killChecked is the fallback without pidfds: kill(2) right after the lock
// check, with the pid checked once more here, at the only call to kill.
func killChecked(pid int, sig syscall.Signal) error {
	if err := checkPID(pid); err != nil {
		return err
	}
	if err := unix.Kill(pid, sig); err != nil && err != unix.ESRCH {
		return err
	}
	return nil
}
