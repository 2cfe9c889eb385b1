package pin

import (
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/nodes"
)

// PidfdIno returns the inode number of the pidfd pfd where it names one
// process for the whole boot: on a kernel with pidfs (Linux 6.9+), which
// numbers each process's inode from a 64-bit counter and never hands a
// number out again. Elsewhere it returns 0: before pidfs every pidfd
// shares one anonymous inode, and on 32-bit machines the numbers can wrap.
func PidfdIno(pfd int) uint64 {
	if strconv.IntSize < 64 {
		return 0
	}
	var fs unix.Statfs_t
	if unix.Fstatfs(pfd, &fs) != nil || fs.Type != unix.PID_FS_MAGIC {
		return 0
	}
	var st unix.Stat_t
	if unix.Fstat(pfd, &st) != nil {
		return 0
	}
	return uint64(st.Ino)
}

// PidfdInoOf returns the inode of a pidfd of the process pid is now, and
// whether the kernel gave one (pidfs): what names that process for good.
// Nothing is signalled; pid may be anyone's.
func PidfdInoOf(pid int) (uint64, bool) {
	pfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return 0, false
	}
	defer unix.Close(pfd)
	ino := PidfdIno(pfd)
	return ino, ino != 0
}

// Identify returns what names the process pid for good, for its node's
// record: its pid, its start time and, where the kernel has pidfs, the
// inode of a pidfd of it. pid must not be reused meanwhile: it is an
// unreaped child of this process.
func Identify(pid int) (nodes.Started, error) {
	p, err := proc.Read(pid)
	if err != nil {
		return nodes.Started{}, err
	}
	st := nodes.Started{PID: pid, StartTicks: p.StartTicks}
	if pfd, err := unix.PidfdOpen(pid, 0); err == nil {
		st.PidfdIno = PidfdIno(pfd)
		unix.Close(pfd)
	}
	return st, nil
}

// PinnedIs reports whether the process pfd pins (pid, as this pid
// namespace names it) is the process want names: by the pidfd's inode
// when the record has one and the kernel gives them, which no other
// process can share; else by pid and start time, which a pid reused
// within the tick the recorded process started in would match.
func PinnedIs(pfd, pid int, want nodes.Started) bool {
	if want.PidfdIno != 0 {
		if ino := PidfdIno(pfd); ino != 0 {
			return ino == want.PidfdIno
		}
	}
	return ProcIs(pid, want)
}

// RecordedRuns returns the process st names when it runs (not a zombie),
// checked as [PinnedIs] checks it, through a pidfd opened for the check.
func RecordedRuns(st nodes.Started) (proc.Stat, bool) {
	pfd, err := unix.PidfdOpen(st.PID, 0)
	switch err {
	case nil:
		defer unix.Close(pfd)
	case unix.ENOSYS, unix.EPERM, unix.EINVAL:
		pfd = -1 // no pidfds here: pid and start time
	default:
		return proc.Stat{}, false
	}
	p, err := proc.Read(st.PID)
	if err != nil || p.Gone() {
		return proc.Stat{}, false
	}
	if pfd < 0 {
		return p, p.StartTicks == st.StartTicks
	}
	return p, PinnedIs(pfd, st.PID, st)
}
