package logwriter

import (
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/proc"
)

// exitWait bounds how long the writer looks for the node's exit status
// once the node has exited: its parent may take that long to collect
// it (a PID 1 that reaps orphans every few seconds).
const exitWait = 30 * time.Second

// ended says how the node's process, pid with start time ticks, ended,
// once its output has closed: read through its pidfd (-1: none) when
// it has exited, as a zombie's /proc stat while its parent has not
// collected it, or the kernel's exit record once it has (Linux 6.15+).
// It waits for the exit, since the node may close its output and run on.
func ended(pidfd, pid int, ticks uint64) string {
	if pidfd < 0 {
		return "ended (its exit status unknown: no pidfd)"
	}
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if err != unix.EINTR {
			if err != nil || fds[0].Revents&unix.POLLNVAL != 0 {
				return "ended (its exit status unknown: no pidfd)"
			}
			break
		}
	}
	deadline := time.Now().Add(exitWait)
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		if st, err := proc.Read(pid); err == nil && st.StartTicks == ticks && st.State == 'Z' &&
			unix.PidfdSendSignal(pidfd, 0, nil, 0) == nil {
			// Still the zombie after the read: the pid was not recycled.
			return "ended: " + describe(syscall.WaitStatus(st.ExitCode))
		}
		if ws, ok := exitInfo(pidfd); ok {
			return "ended: " + describe(ws)
		}
		if time.Now().After(deadline) {
			return "ended (its exit status unknown: not yet collected by its parent)"
		}
		time.Sleep(delay)
	}
}

// pidfdInfo is the kernel's struct pidfd_info, its first version.
type pidfdInfo struct {
	Mask     uint64
	CgroupID uint64
	IDs      [11]uint32 // pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid
	ExitCode int32
}

const (
	pidfdGetInfo  = 0xC040FF0B // _IOWR(0xFF, 11, struct pidfd_info)
	pidfdInfoExit = 1 << 3
)

// exitInfo is the exit status the kernel keeps for a reaped process
// behind its pidfd (PIDFD_GET_INFO, Linux 6.15+).
func exitInfo(pidfd int) (syscall.WaitStatus, bool) {
	info := pidfdInfo{Mask: pidfdInfoExit}
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(pidfd), pidfdGetInfo, uintptr(unsafe.Pointer(&info)))
	if e != 0 || info.Mask&pidfdInfoExit == 0 {
		return 0, false
	}
	return syscall.WaitStatus(info.ExitCode), true
}

// pipeSize is the size of the pipe at fd.
func pipeSize(fd int) int {
	n, err := unix.FcntlInt(uintptr(fd), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		return 64 << 10
	}
	return n
}
