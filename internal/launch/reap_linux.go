package launch

import (
	"os"
	"os/exec"
	"unsafe"

	"github.com/multi-launcher/multi/internal/proc"
	"golang.org/x/sys/unix"
)

// reap collects the exit status of a node this process started, when it
// exits, so that a long-running orchestrator does not fill up with zombies.
// It waits on a pidfd in Go's network poller, which costs a parked
// goroutine per node rather than a thread blocked in waitid(2), and one
// descriptor: the os.Process's own is released.
func reap(cmd *exec.Cmd) {
	// The node is our unreaped child, so its pid cannot be reused yet.
	fd, err := unix.PidfdOpen(cmd.Process.Pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		go cmd.Wait()
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		go cmd.Wait()
		return
	}
	cmd.Process.Release()
	go func() {
		rc.Read(func(fd uintptr) bool {
			var info unix.Siginfo
			// Reap it once it has exited (Signo is set then).
			err := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG, nil)
			return err != nil || info.Signo != 0
		})
		f.Close()
	}()
}

// exited reports whether this process's child pid has exited or is
// exiting: waitable (waitid(2) with WNOWAIT, so that its *os.Process can
// still wait for it), or flagged PF_EXITING in /proc/PID/stat, which the
// kernel sets before it closes a dying process's descriptors (and so drops
// its locks). Either way, waiting for it does not block for long.
func exited(pid int) bool {
	return waitable(pid) || procFlags(pid)&pfExiting != 0
}

// waitable reports whether this process's child pid has exited (a zombie
// now) or been reaped, without reaping it: exited without its look at
// /proc, one system call for a poll that looks again.
func waitable(pid int) bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if err == unix.EINTR {
			continue
		}
		// ECHILD: not waitable (reaped already), so nothing to kill.
		return err != nil || info.Signo != 0
	}
}

// pfExiting is PF_EXITING, in the flags field of /proc/PID/stat.
const pfExiting = 0x4

// procFlags returns the kernel flags of pid, 0 when they cannot be read.
func procFlags(pid int) uint64 {
	p, err := proc.Read(pid)
	if err != nil {
		return 0
	}
	return p.Flags
}

// SetSubreaper makes this process a child subreaper: orphans of its
// descendants are reparented to it, not to PID 1, so that its reaper reaps them.
// restore puts back what it was before: a library caller that was not a
// subreaper must not be one after Run, with nobody reaping what it adopts.
func SetSubreaper() (restore func(), err error) {
	var was int32
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&was)), 0, 0, 0); err != nil {
		return func() {}, err
	}
	if was != 0 {
		return func() {}, nil
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return func() {}, err
	}
	return func() { unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) }, nil
}
