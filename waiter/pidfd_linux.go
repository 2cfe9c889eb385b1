package waiter

import (
	"context"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// watchPidfds sends i on wake when process pids[i] exits, seen through a
// pidfd (pidfd_open(2), Linux 5.3) that becomes readable at exit, zombie or
// not. The pidfds sit in Go's network poller,
// so a thousand of them cost parked goroutines, not threads. A pid that
// cannot be opened (gone already, or an old kernel) just gets no wake-up:
// the lock tests decide, this only hurries them.
func watchPidfds(ctx context.Context, pids []int, wake chan<- int) (stop func()) {
	var (
		wg    sync.WaitGroup
		files []*os.File
	)
	for i, pid := range pids {
		if pid <= 1 {
			continue
		}
		fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
		if err != nil {
			continue
		}
		f := os.NewFile(uintptr(fd), "pidfd")
		rc, err := f.SyscallConn()
		if err != nil {
			f.Close()
			continue
		}
		files = append(files, f)
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := rc.Read(func(fd uintptr) bool {
				n, _ := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
				return n > 0
			})
			if err == nil {
				select {
				case wake <- i:
				case <-ctx.Done():
				}
			}
		}()
	}
	return func() {
		for _, f := range files {
			f.SetReadDeadline(time.Now())
		}
		wg.Wait()
		for _, f := range files {
			f.Close()
		}
	}
}
