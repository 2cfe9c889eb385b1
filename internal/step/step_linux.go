package step

// The exec step's system-specific parts on Linux: its name, dup3,
// its signal mask.

import (
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// nameStep gives the exec step, started as /proc/self/exe (so named "exe"
// by the kernel), its program's own name, as ps and /proc/PID/comm show
// it for the moment before it execs the node's command: one prctl, not
// an open, write and close of /proc/self/comm.
func nameStep() {
	self, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	name := strings.TrimSuffix(filepath.Base(self), " (deleted)")
	if len(name) > 15 {
		name = name[:15] // the kernel's limit, TASK_COMM_LEN less the NUL
	}
	b := append([]byte(name), 0)
	unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0)
}

// closeOnExecFrom3 marks every descriptor from 3 on close-on-exec in one
// system call (close_range(2), Linux 5.11); false where the kernel
// cannot, for closeInherited to do it one by one.
func closeOnExecFrom3() bool {
	return unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil
}

// dup2 makes newfd a copy of oldfd (dup3(2): linux/arm64 has no dup2).
func dup2(oldfd, newfd int) error { return unix.Dup3(oldfd, newfd, 0) }

// unblockSignals empties this thread's signal mask, which an exec from
// it hands to the node, and sets signals 32 and 33 to their default: Go's
// runtime leaves those two as it found them and os/signal cannot catch
// them, so one that multi's caller ignored (make starts its recipes with
// both ignored) would stay ignored in the node.
func unblockSignals() {
	var none unix.Sigset_t
	unix.PthreadSigmask(unix.SIG_SETMASK, &none, nil)
	var dfl [4]uint64 // a kernel sigaction: SIG_DFL, no flags, empty mask
	for _, sig := range []uintptr{32, 33} {
		unix.RawSyscall6(unix.SYS_RT_SIGACTION, sig, uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0)
	}
}

// RlimitResource is the resource of the rlimit name (nofile, nproc, core,
// as) as setrlimit(2) takes it.
func RlimitResource(name string) (int, bool) {
	switch name {
	case "nofile":
		return unix.RLIMIT_NOFILE, true
	case "nproc":
		return unix.RLIMIT_NPROC, true
	case "core":
		return unix.RLIMIT_CORE, true
	case "as":
		return unix.RLIMIT_AS, true
	}
	return 0, false
}

// hardLimit is this process's hard limit of resource (infinity when
// unknown).
func hardLimit(resource int) uint64 {
	var r unix.Rlimit
	if unix.Getrlimit(resource, &r) != nil {
		return unix.RLIM_INFINITY
	}
	return r.Max
}

// getrlimit is this process's soft and hard limits of resource.
func getrlimit(resource int) (soft, hard uint64, ok bool) {
	var r unix.Rlimit
	if unix.Getrlimit(resource, &r) != nil {
		return 0, 0, false
	}
	return r.Cur, r.Max, true
}

// setrlimit sets resource's soft and hard limits on this process
// (through package syscall, which then leaves RLIMIT_NOFILE to the exec).
func setrlimit(resource int, soft, hard uint64) error {
	return unix.Setrlimit(resource, &unix.Rlimit{Cur: soft, Max: hard})
}
