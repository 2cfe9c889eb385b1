//go:build unix

package pin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/testhooks"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
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

// SignalNode sends sig to the process that holds the lock on the pidfile
// at path, or with group to the whole process group it leads
// ([StopOptions.Group]). The holder is read from the kernel just before the
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
//
// SignalNode checks the holder against no record: its callers name the
// process they expect (multi run, its own child) or are tests.
func SignalNode(path string, expect int, sig syscall.Signal, group bool) (pidfile.Info, error) {
	info, h, _, err := SignalKeep(path, expect, nodes.Started{}, sig, group, false, nil, false)
	if h != nil {
		h.Close()
	}
	return info, err
}

// SignalKeep is SignalNode that also returns the handle it tested the lock
// on, still open (nil if none is), so that the caller can wait on the same
// file and remove it without opening it again; the caller closes it. With
// rw the pidfile is opened for writing too ([pidfile.OpenToRemove]), in
// its folder as dirs has it open (nil: reached for this pidfile alone).
// With pin it also returns, open, the pidfd (Linux) that pinned the
// process it signalled, for the wait to watch; nil if
// there is none. The caller closes it.
//
// If want names a process (the node's record does), the pinned holder
// must be it (see [sendPinned]): else a [*HolderError], and no signal.
func SignalKeep(path string, expect int, want nodes.Started, sig syscall.Signal, group, rw bool, dirs *pidfile.Folders, pin bool) (info pidfile.Info, h *pidfile.Handle, pidfd *os.File, err error) {
	open := pidfile.Open
	if rw {
		open = dirs.OpenToRemove
	}
	info = pidfile.Info{Path: path}
	h, err = open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return info, nil, nil, ErrNotRunning
	}
	if err != nil {
		return info, nil, nil, err
	}
	// h changes when the pidfile is replaced under us, and is nil when the
	// new one cannot be opened (a concurrent stopwait removed it, say).
	var pp **os.File
	if pin {
		pp = &pidfd
	}
	info, err = signalOn(&h, path, open, expect, want, sig, group, pp)
	if err != nil && pidfd != nil {
		pidfd.Close()
		pidfd = nil
	}
	return info, h, pidfd, err
}

// signalOn is SignalKeep's loop on the open handle *h, which it replaces
// (through open) when the path names a new file. If pin is not nil, *pin
// gets the pidfd that pinned the process signalled, if any.
func signalOn(hp **pidfile.Handle, path string, open func(string) (*pidfile.Handle, error), expect int, want nodes.Started, sig syscall.Signal, group bool, pin **os.File) (info pidfile.Info, err error) {
	var bw briefWaiter
	brief := bw.Wait
	for try := 0; try < 100; try++ {
		h := *hp
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
			*hp, err = open(path)
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
		if pid == os.Getpid() {
			return info, fmt.Errorf("%w: pidfile %s is locked by this process (pid %d); not signalled", ErrOwnNode, path, pid)
		}
		// The one check of this pid: what follows takes only a SafePID.
		p, err := CheckPID(pid)
		if err != nil {
			return info, err
		}
		if h := testhooks.BeforePin; h != nil {
			h(pid)
		}
		sent, err := sendPinned(h, p, want, sig, contFollows(sig), group, pin)
		var he *HolderError
		if errors.As(err, &he) {
			he.PidFile = path
			return info, he
		}
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

// KillHeld sends sig (SIGKILL, after a stopwait's timeout) to expect, the
// process a stopwait signalled and is waiting for, through what that
// signal left open: h, the pidfile's handle, and pidfd, the pidfd that
// pinned expect then. Neither is opened again. Only when expect still
// holds the lock on h, or has let go of it and lives on (its pidfd not
// yet readable: exiting, or lingering), is it signalled, through that
// pidfd: a pidfd names one process for good, so a pid reused since
// cannot get the signal. A lock let go by a process that has exited, or
// now another process's, gives ErrNotRunning. Without h or pidfd it is
// SignalKeep (the pidfile opened again, the holder pinned anew and
// checked against want, the process the node's record names).
func KillHeld(h *pidfile.Handle, pidfd *os.File, path string, expect int, want nodes.Started, sig syscall.Signal, group bool) error {
	if h == nil || pidfd == nil {
		_, h, _, err := SignalKeep(path, expect, want, sig, group, false, nil, false)
		if h != nil {
			h.Close()
		}
		return err
	}
	state, pid, err := h.Holder()
	if err != nil {
		return err
	}
	if (state != pidfile.Running || pid != expect) && PidfdGone(pidfd) {
		return ErrNotRunning
	}
	// Held still, or let go by a process that lives on: the pidfd names
	// the process signalled first, for good.
	pid = expect
	p, err := CheckPID(pid)
	if err != nil {
		return err
	}
	if err := signalPidfd(pidfd, p, sig, contFollows(sig), group); err != nil {
		target := "pid"
		if group {
			target = "the process group of pid"
		}
		return fmt.Errorf("signal %s to %s %d: %w", SignalName(sig), target, pid, err)
	}
	return nil
}

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

// withCont returns sig, followed by SIGCONT when cont is set.
func withCont(sig syscall.Signal, cont bool) []syscall.Signal {
	if cont {
		return []syscall.Signal{sig, unix.SIGCONT}
	}
	return []syscall.Signal{sig}
}

// killUnpinned is the fallback without pidfds: kill(2) right after the
// lock check, of the holder or, with group, of the group it must lead;
// then SIGCONT with cont.
func killUnpinned(p SafePID, sig syscall.Signal, cont, group bool) error {
	if !group {
		return KillPID(p, withCont(sig, cont)...)
	}
	g, err := CheckGroupLeader(p)
	if err != nil {
		return err
	}
	return KillGroup(g, withCont(sig, cont)...)
}

// KillPID sends each of sigs to p with kill(2): the only kill(2) of one
// process. p was checked where it was read (see [SafePID]).
func KillPID(p SafePID, sigs ...syscall.Signal) error {
	for _, sig := range sigs {
		if err := unix.Kill(int(p), sig); err != nil && err != unix.ESRCH {
			return err
		}
	}
	return nil
}

// errNotLeader: Group was asked for, but the lock holder does not lead its
// own process group, so its group is not the node's to signal.
var errNotLeader = errors.New("not the leader of its own process group (not signalled)")

// A safeGroup is a process group that [CheckGroupLeader] has passed: led
// by a checked pid, and not multi's own. The calls that signal a group
// take only a safeGroup.
type safeGroup int

// CheckGroupLeader confirms that p leads its own process group, so that
// signalling the group reaches the node and what it forked, and that the
// group is not multi's own (kill(-pgid) of it would end multi and its
// caller); it is the one check of a group before its signal.
func CheckGroupLeader(p SafePID) (safeGroup, error) {
	pgid, err := unix.Getpgid(int(p))
	if err != nil {
		return 0, err
	}
	if pgid != int(p) {
		return 0, fmt.Errorf("%w: pid %d is in process group %d", errNotLeader, p, pgid)
	}
	if pgid == unix.Getpgrp() {
		return 0, fmt.Errorf("%w -%d: multi's own process group", ErrUnsafePID, pgid)
	}
	return safeGroup(pgid), nil
}

// KillGroup sends each of sigs to the process group g with kill(2): the
// only kill(2) of a group. Its leader's pid was checked (never <= 1, so
// never kill(0) nor kill(-1), "my group" and "everyone"), and so was the
// group.
func KillGroup(g safeGroup, sigs ...syscall.Signal) error {
	for _, sig := range sigs {
		if err := unix.Kill(-int(g), sig); err != nil && err != unix.ESRCH {
			return err
		}
	}
	return nil
}
