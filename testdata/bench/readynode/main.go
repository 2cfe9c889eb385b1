//go:build linux

// Command readynode is the node of the bench's readiness rows
// (testdata/bench/driver; docs/benchmarks.md): small, static, with as
// little to initialise as a Go program can have, since every node of a
// start of 1000 runs it.
//
//	readynode [-fd N] [-gate DIR]
package main

import (
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func main() { readyNode(os.Args[1:]) }

// readyNode says the node is ready the way its supervisor asks, then
// waits for SIGTERM.
//
//   - with -fd N it writes a line to descriptor N (s6's notification-fd,
//     multi's --ready=fd:N); otherwise it sends READY=1 to $NOTIFY_SOCKET
//     (systemd's protocol, multi's --ready=notify);
//   - with -gate DIR (the tail benchmark) it first writes a byte to the
//     fifo DIR/hello, then reads a byte from the fifo DIR/gate, which the
//     driver writes only once every node has said hello (all at once, or
//     one every -tail-gap): so no node is ready before all are started. It reads
//     CLOCK_MONOTONIC just before its send and, 300 ms later (after
//     start's return, so as not to compete with it), writes it in ns to
//     DIR/stamp.PID.
//
// It exits by itself after ten minutes, so that nothing outlives a broken
// run for long.
func readyNode(args []string) {
	fd, gate := new(int), new(string)
	for i := 0; i+1 < len(args); i += 2 {
		switch args[i] {
		case "-fd":
			*fd, _ = strconv.Atoi(args[i+1])
		case "-gate":
			*gate = args[i+1]
		default:
			os.Stderr.WriteString("usage: readynode [-fd N] [-gate DIR]\n")
			os.Exit(2)
		}
	}
	fail := func(err error) {
		os.Stderr.WriteString("readynode: " + err.Error() + "\n")
		os.Exit(1)
	}
	if *gate != "" {
		h, err := os.OpenFile(filepath.Join(*gate, "hello"), os.O_WRONLY, 0)
		if err != nil {
			fail(err)
		}
		if _, err := h.Write([]byte{1}); err != nil {
			fail(err)
		}
		h.Close()
		g, err := unix.Open(filepath.Join(*gate, "gate"), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			fail(err)
		}
		if _, err := unix.Read(g, make([]byte, 1)); err != nil {
			fail(err)
		}
		unix.Close(g)
	}
	t := mono()
	if err := sayReady(*fd); err != nil {
		fail(err)
	}
	if *gate != "" {
		time.Sleep(300 * time.Millisecond)
		stamp := filepath.Join(*gate, "stamp."+strconv.Itoa(os.Getpid()))
		if err := os.WriteFile(stamp+".tmp", []byte(strconv.FormatInt(t, 10)), 0o644); err != nil {
			fail(err)
		}
		if err := os.Rename(stamp+".tmp", stamp); err != nil {
			fail(err)
		}
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	select {
	case <-sigs:
		os.Exit(0)
	case <-time.After(10 * time.Minute):
		os.Exit(3)
	}
}

// sayReady writes a line to fd, or with fd 0 sends READY=1 to
// $NOTIFY_SOCKET.
func sayReady(fd int) error {
	if fd > 0 {
		if _, err := unix.Write(fd, []byte("\n")); err != nil {
			return &os.SyscallError{Syscall: "write to descriptor " + strconv.Itoa(fd), Err: err}
		}
		return unix.Close(fd)
	}
	path := os.Getenv("NOTIFY_SOCKET")
	if path == "" {
		return os.ErrInvalid // no NOTIFY_SOCKET and no -fd
	}
	if path[0] == '@' {
		path = "\x00" + path[1:]
	}
	s, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(s)
	if err := unix.Sendto(s, []byte("READY=1"), 0, &unix.SockaddrUnix{Name: path}); err != nil {
		return &os.PathError{Op: "send READY=1", Path: path, Err: err}
	}
	return nil
}

// mono is CLOCK_MONOTONIC in ns, the clock of the tail benchmark's two
// ends (the nodes' sends and the driver's wait4; the driver has a copy).
func mono() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}
