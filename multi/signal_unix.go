//go:build unix

package multi

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/nodes/pidfile"
	"golang.org/x/sys/unix"
)

func signalName(sig syscall.Signal) string { return unix.SignalName(sig) }
func signalNum(name string) syscall.Signal { return unix.SignalNum(name) }

func isStopSignal(sig syscall.Signal) bool {
	switch sig {
	case unix.SIGSTOP, unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU:
		return true
	}
	return false
}

// signalNode sends sig to the process that holds the lock on the pidfile
// at path, or with group to the whole process group it leads
// ([Cluster.Group]). The holder is read from the kernel just before the
// signal, pinned and seen to still hold the lock; with group it must also
// lead its own process group (a node does, from its setsid), which is never
// multi's own. A pidfile nobody has locked gives ErrNotRunning and no
// signal. If expect is positive, only that pid is signalled: a lock now
// held by another process means the awaited one is gone.
//
// The Info says what the pidfile was when it was signalled (Running, with
// the file's text) or why not (Absent, Stale), so that the caller need not
// open it again.
//
// Only a whole-file POSIX write lock is a node's. Another multi's brief OFD
// lock, and a holder whose pid is not yet in the file's text (a node's exec
// step between its lock and its pid), are waited out for up to
// [pidfile.BriefWait]; a lock that stays OFD, or is a read lock or a partial
// one, is a [*pidfile.ForeignError] and nothing is signalled. A text that
// keeps disagreeing does not stop the signal: the holder is the truth.
//
// After a signal that ends a process (see [contFollows]) SIGCONT goes the
// same way, as systemd sends it, so that a stopped node gets the signal.
func signalNode(path string, expect int, sig syscall.Signal, group bool) (pidfile.Info, error) {
	info := pidfile.Info{Path: path}
	h, err := pidfile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return info, ErrNotRunning
	}
	if err != nil {
		return info, err
	}
	// h changes when the pidfile is replaced under us, and is nil when the
	// new one cannot be opened (a concurrent stopwait removed it, say).
	defer func() {
		if h != nil {
			h.Close()
		}
	}()
	t0, wait := time.Now(), 50*time.Microsecond
	brief := func() bool {
		if time.Since(t0) > pidfile.BriefWait {
			return false
		}
		pidfile.TestMarkBrief()
		time.Sleep(wait)
		wait = min(2*wait, 10*time.Millisecond)
		return true
	}
	for try := 0; try < 100; try++ {
		info, err = h.Snapshot()
		if err != nil {
			return info, err
		}
		state, pid := info.State, info.PID
		switch state {
		case pidfile.Stale:
			if h.SameFile() {
				return info, ErrNotRunning
			}
			// Replaced or removed since we opened it: look at the new file.
			h.Close()
			h, err = pidfile.Open(path)
			if errors.Is(err, fs.ErrNotExist) {
				return pidfile.Info{Path: path}, ErrNotRunning
			} else if err != nil {
				return info, err
			}
			continue
		case pidfile.Elsewhere:
			return info, ErrElsewhere
		case pidfile.Foreign:
			var fe *pidfile.ForeignError
			if errors.As(info.LockErr, &fe) && fe.OFD() && brief() {
				try-- // another multi's brief lock, most likely: look again
				continue
			}
			return info, info.LockErr
		}
		if expect <= 0 && info.Mismatch() && brief() {
			// An exec step that has not written its pid yet, most likely.
			try--
			continue
		}
		if expect > 0 && pid != expect {
			return info, ErrNotRunning
		}
		if err := checkPID(pid); err != nil {
			return info, err
		}
		if testHookBeforePin != nil {
			testHookBeforePin(pid)
		}
		sent, err := sendPinned(h, pid, sig, contFollows(sig), group)
		if err != nil {
			target := "pid"
			if group {
				target = "the process group of pid"
			}
			return info, fmt.Errorf("signal %s to %s %d: %w", SignalName(sig), target, pid, err)
		}
		if sent {
			return info, nil
		}
	}
	return info, fmt.Errorf("pidfile %s: the lock holder keeps changing", path)
}

// testHookBeforePin, when set by a test, runs between the lock test that
// named pid and the pidfd that pins it.
var testHookBeforePin func(pid int)

// contFollows reports whether SIGCONT is to follow sig: after a signal
// that asks a process to end, which a stopped process would never act on,
// but not after SIGKILL (which needs none) nor after the stop signals and
// SIGCONT itself.
func contFollows(sig syscall.Signal) bool {
	switch sig {
	case unix.SIGKILL, unix.SIGCONT:
		return false
	}
	return !IsStopSignal(sig)
}

// killUnpinned is the fallback without pidfds: kill(2) right after the
// lock check, of the holder or, with group, of the group it must lead;
// then SIGCONT with cont.
func killUnpinned(pid int, sig syscall.Signal, cont, group bool) error {
	kill := killChecked
	if group {
		if err := checkGroupLeader(pid); err != nil {
			return err
		}
		kill = killGroupChecked
	}
	if err := kill(pid, sig); err != nil || !cont {
		return err
	}
	return kill(pid, unix.SIGCONT)
}

// killChecked sends sig to pid with kill(2), the pid checked once more
// here, at the only call that signals one process.
func killChecked(pid int, sig syscall.Signal) error {
	if err := checkPID(pid); err != nil {
		return err
	}
	if err := unix.Kill(pid, sig); err != nil && err != unix.ESRCH {
		return err
	}
	return nil
}

// errNotLeader: Group was asked for, but the lock holder does not lead its
// own process group, so its group is not the node's to signal.
var errNotLeader = errors.New("not the leader of its own process group (not signalled)")

// checkGroupLeader confirms that pid leads its own process group, so that
// kill(-pid) reaches the node and what it forked, and that the group is
// not multi's own.
func checkGroupLeader(pid int) error {
	if err := checkPID(pid); err != nil {
		return err
	}
	pgid, err := unix.Getpgid(pid)
	if err != nil {
		return err
	}
	if pgid != pid {
		return fmt.Errorf("%w: pid %d is in process group %d", errNotLeader, pid, pgid)
	}
	if pgid == unix.Getpgrp() {
		return fmt.Errorf("%w -%d: multi's own process group", ErrUnsafePID, pgid)
	}
	return nil
}

// killGroupChecked sends sig to the process group pgid with kill(2), the
// group checked once more here, at the only call that signals a group:
// never a pgid <= 1 (kill(0) and kill(-1) mean "my group" and "everyone"),
// this process, or multi's own group.
func killGroupChecked(pgid int, sig syscall.Signal) error {
	if err := checkPID(pgid); err != nil {
		return err
	}
	if pgid == unix.Getpgrp() {
		return fmt.Errorf("%w -%d: multi's own process group", ErrUnsafePID, pgid)
	}
	if err := unix.Kill(-pgid, sig); err != nil && err != unix.ESRCH {
		return err
	}
	return nil
}
