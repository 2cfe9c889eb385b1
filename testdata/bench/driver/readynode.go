//go:build linux

package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// readyNode is the node of the readiness rows (`driver readynode`): it
// says it is ready the way its supervisor asks, then waits for SIGTERM.
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
	fl := flag.NewFlagSet("readynode", flag.ExitOnError)
	fd := fl.Int("fd", 0, "write a line to this descriptor instead of READY=1 on $NOTIFY_SOCKET")
	gate := fl.String("gate", "", "the tail benchmark's folder (hello and gate fifos, stamp files)")
	fl.Parse(args)
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "readynode:", err)
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
			return fmt.Errorf("write to descriptor %d: %w", fd, err)
		}
		return unix.Close(fd)
	}
	path := os.Getenv("NOTIFY_SOCKET")
	if path == "" {
		return fmt.Errorf("no NOTIFY_SOCKET and no -fd")
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
		return fmt.Errorf("READY=1 to %s: %w", path, err)
	}
	return nil
}

// mono is CLOCK_MONOTONIC in ns, the clock of the tail benchmark's two
// ends (the nodes' sends and the driver's wait4).
func mono() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}
