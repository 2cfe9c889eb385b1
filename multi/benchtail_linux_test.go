package multi_test

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/multi"
)

// watchDeaths opens a pidfd on each running node of c and returns a
// channel that gets the time the last of them exited (became readable).
// The pidfds wait in one epoll instance, so that watching costs the
// process under measurement nothing per death but one event (a poll(2)
// of all N after each death would cost it O(N²)). It gives the zero time
// if they have not all exited within a minute.
func watchDeaths(b *testing.B, c *multi.Cluster) <-chan time.Time {
	b.Helper()
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		b.Fatal(err)
	}
	var fds []int
	for _, n := range c.Nodes {
		pid := testutil.Holder(n.PidFile)
		if pid <= 1 {
			b.Fatalf("node %s not running", n.Name)
		}
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			b.Fatal(err)
		}
		fds = append(fds, fd)
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLONESHOT, Fd: int32(fd)}
		if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
			b.Fatal(err)
		}
	}
	last := make(chan time.Time, 1)
	go func() {
		defer func() {
			for _, fd := range fds {
				unix.Close(fd)
			}
			unix.Close(epfd)
		}()
		events := make([]unix.EpollEvent, 256)
		left := len(fds)
		deadline := time.Now().Add(time.Minute)
		var at time.Time
		for left > 0 && time.Now().Before(deadline) {
			n, err := unix.EpollWait(epfd, events, 1000)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				break
			}
			if n > 0 {
				at = time.Now()
				left -= n
			}
		}
		if left > 0 {
			at = time.Time{} // not all died: the benchmark's StopWait says so
		}
		last <- at
	}()
	return last
}
