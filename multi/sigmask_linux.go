package multi

import "golang.org/x/sys/unix"

// unblockSignals empties this thread's signal mask, which an exec from
// it hands to the node.
func unblockSignals() {
	var none unix.Sigset_t
	unix.PthreadSigmask(unix.SIG_SETMASK, &none, nil)
}
