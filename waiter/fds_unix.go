//go:build unix

package waiter

import (
	"os"

	"golang.org/x/sys/unix"
)

// descriptorLimit returns the soft RLIMIT_NOFILE and how many descriptors
// are open (counted in /proc/self/fd or /dev/fd; 32 is assumed where
// neither lists them all).
func descriptorLimit() (limit, inUse int, ok bool) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil || rl.Cur == unix.RLIM_INFINITY || rl.Cur > maxBudget {
		return 0, 0, false
	}
	inUse = 32
	for _, dir := range []string{"/proc/self/fd", "/dev/fd"} {
		// /dev/fd without fdescfs (FreeBSD) shows only 0, 1 and 2.
		if ents, err := os.ReadDir(dir); err == nil && len(ents) > 3 {
			inUse = len(ents)
			break
		}
	}
	return int(rl.Cur), inUse, true
}
