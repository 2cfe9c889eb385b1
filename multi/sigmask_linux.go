package multi

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// unblockSignals empties this thread's signal mask, which an exec from
// it hands to the node, and sets signals 32 and 33 to their default: Go's
// runtime leaves those two as it found them and os/signal cannot catch
// them, so one that multi's caller ignored (make starts its recipes with
// both ignored) would stay ignored in the node. The fork path's child
// resets them with every other signal.
func unblockSignals() {
	var none unix.Sigset_t
	unix.PthreadSigmask(unix.SIG_SETMASK, &none, nil)
	var dfl [4]uint64 // a kernel sigaction: SIG_DFL, no flags, empty mask
	for _, sig := range []uintptr{32, 33} {
		unix.RawSyscall6(unix.SYS_RT_SIGACTION, sig, uintptr(unsafe.Pointer(&dfl)), 0, 8, 0, 0)
	}
}
