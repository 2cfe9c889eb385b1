package integration

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sigBlock is "sigblock PROGRAM ARGS...": it execs PROGRAM with SIGUSR1,
// SIGUSR2 and SIGWINCH blocked and SIGHUP, SIGUSR2 and signal 32 ignored, as a
// caller of multi may have them.
func sigBlock() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: sigblock PROGRAM ARGS...")
		os.Exit(2)
	}
	path, err := exec.LookPath(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "sigblock:", err)
		os.Exit(2)
	}
	signal.Ignore(syscall.SIGHUP, syscall.SIGUSR2)
	// Signal 32 too, as make starts its recipes: the Go runtime leaves
	// it as it finds it, so signal.Ignore cannot, and neither can a
	// node's exec step undo it through signal.Notify.
	ign := [4]uint64{1} // a kernel sigaction: SIG_IGN
	if _, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, 32, uintptr(unsafe.Pointer(&ign[0])), 0, 8, 0, 0); e != 0 {
		fmt.Fprintln(os.Stderr, "sigblock: ignoring signal 32:", e)
		os.Exit(2)
	}
	runtime.LockOSThread() // the exec happens with this thread's mask
	var set unix.Sigset_t
	for _, sig := range []syscall.Signal{syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH} {
		set.Val[(sig-1)/64] |= 1 << ((uint(sig) - 1) % 64)
	}
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, nil); err != nil {
		fmt.Fprintln(os.Stderr, "sigblock:", err)
		os.Exit(2)
	}
	err = syscall.Exec(path, os.Args[1:], os.Environ())
	fmt.Fprintln(os.Stderr, "sigblock:", err)
	os.Exit(2)
}
