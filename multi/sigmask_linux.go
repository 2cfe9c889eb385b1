package multi

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// unblockSignals empties this thread's signal mask, which an exec from
// it hands to the node, and sets back to their default the signals the
// Go runtime leaves as it found them (32 and 33, which the C library
// uses), where the caller ignored them: signal.Notify cannot reach
// those, and an exec keeps a signal ignored (make, for one, starts its
// recipes with both ignored).
func unblockSignals() {
	var none unix.Sigset_t
	unix.PthreadSigmask(unix.SIG_SETMASK, &none, nil)
	// A kernel sigaction: handler first, then flags, restorer, mask, on
	// every architecture but mips (flags first): there the test below
	// never sees SIG_IGN, or sees it where the handler is SIG_DFL
	// already, so it changes nothing that matters.
	for _, sig := range []uintptr{32, 33} {
		var old, dfl [4]uint64
		_, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, sig, 0, uintptr(unsafe.Pointer(&old[0])), 8, 0, 0)
		if e == 0 && old[0] == 1 { // SIG_IGN
			syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, sig, uintptr(unsafe.Pointer(&dfl[0])), 0, 8, 0, 0)
		}
	}
}
