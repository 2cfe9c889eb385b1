//go:build linux

package main

import "golang.org/x/sys/unix"

// mono is CLOCK_MONOTONIC in ns, the clock of the tail benchmark's two
// ends: the nodes' sends (testdata/bench/readynode has a copy) and the
// driver's wait4.
func mono() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}
