package multi

import (
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// reap collects the exit status of a node this process started, when it
// exits, so that a long-running orchestrator does not fill up with zombies.
// It waits on a pidfd in Go's network poller, which costs a parked
// goroutine per node rather than a thread blocked in waitid(2).
func reap(cmd *exec.Cmd) {
	// The node is our unreaped child, so its pid cannot be reused yet.
	fd, err := unix.PidfdOpen(cmd.Process.Pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		go cmd.Wait()
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		go cmd.Wait()
		return
	}
	go func() {
		rc.Read(func(fd uintptr) bool {
			n, _ := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
			return n > 0
		})
		f.Close()
		cmd.Wait()
	}()
}

// dup2 makes newfd a copy of oldfd (dup3(2): linux/arm64 has no dup2).
func dup2(oldfd, newfd int) error { return unix.Dup3(oldfd, newfd, 0) }
