//go:build unix

package fdwait

import (
	"fmt"
	"syscall"
)

// limitText names the limit: "RLIMIT_NOFILE is 16: ulimit -n".
func limitText() string {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return "RLIMIT_NOFILE: raise ulimit -n"
	}
	return fmt.Sprintf("this process may open %d files, its RLIMIT_NOFILE: raise ulimit -n", l.Cur)
}
