//go:build unix

package pin

import "syscall"

// unixSignals are signals ParseSignal must know that only Unix has.
var unixSignals = map[string]syscall.Signal{"USR1": syscall.SIGUSR1}
