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
// SIGUSR2 and SIGWINCH blocked and SIGHUP, SIGUSR2, 32 and 33 ignored, as
// a caller of multi may have them.
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
	// And 32 and 33, which os/signal cannot ignore, as make ignores them
	// in its recipes.
	var ign = [4]uint64{1} // a kernel sigaction: SIG_IGN, no flags, empty mask
	for _, sig := range []uintptr{32, 33} {
		if _, _, e := unix.RawSyscall6(unix.SYS_RT_SIGACTION, sig, uintptr(unsafe.Pointer(&ign)), 0, 8, 0, 0); e != 0 {
			fmt.Fprintf(os.Stderr, "sigblock: signal %d: %v\n", sig, e)
			os.Exit(2)
		}
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
