package multi_test

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// watchDeaths opens a pidfd on each running node of c and returns a
// channel that gets the time the last of them exited (became readable).
// It fails the benchmark if they have not all exited within a minute.
func watchDeaths(b *testing.B, c *multi.Cluster) <-chan time.Time {
	b.Helper()
	var fds []unix.PollFd
	for _, n := range c.Nodes {
		info, err := pidfile.Inspect(n.PidFile)
		if err != nil || info.State != pidfile.Running || info.PID <= 1 || info.PID == os.Getpid() {
			b.Fatalf("node %s not running: %v", n.Name, err)
		}
		fd, err := unix.PidfdOpen(info.PID, 0)
		if err != nil {
			b.Fatal(err)
		}
		fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}
	last := make(chan time.Time, 1)
	go func() {
		defer func() {
			for _, p := range fds {
				unix.Close(int(p.Fd))
			}
		}()
		left := append([]unix.PollFd(nil), fds...)
		deadline := time.Now().Add(time.Minute)
		var at time.Time
		for len(left) > 0 && time.Now().Before(deadline) {
			if _, err := unix.Poll(left, 1000); err != nil && err != unix.EINTR {
				break
			}
			at = time.Now()
			kept := left[:0]
			for _, p := range left {
				if p.Revents == 0 {
					kept = append(kept, p)
				}
			}
			left = kept
		}
		if len(left) > 0 {
			at = time.Time{} // not all died: the benchmark's StopWait says so
		}
		last <- at
	}()
	return last
}
