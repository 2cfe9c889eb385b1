//go:build unix

package ready

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/nodes"
)

// The tcp and http checks use raw sockets, not package net: net links
// the cgo resolver, which makes the binary dynamic, and every exec step
// (one per node started) would then pay for ld.so and glibc's start-up
// (docs/benchmarks.md). So hosts are addresses, or localhost.

// dialTCP connects to hostport ("127.0.0.1:80", "[::1]:80",
// "localhost:80") before ctx's deadline, and returns the connected,
// non-blocking socket.
func dialTCP(ctx context.Context, hostport string) (int, error) {
	host, port, err := nodes.SplitHostPort(hostport)
	if err != nil {
		return -1, err
	}
	var addrs []netip.Addr
	if host == "localhost" {
		addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}
	} else if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		return -1, fmt.Errorf("%q is not an address", host)
	}
	for i, a := range addrs {
		fd, err := connect(ctx, a, port)
		if err == nil || i == len(addrs)-1 {
			return fd, err
		}
	}
	return -1, errors.New("no address") // not reached
}

// StreamSocket returns a TCP socket for a, close-on-exec, and a's
// address with port for it: for a connect here, a bind in the health
// server.
func StreamSocket(a netip.Addr, port int) (int, unix.Sockaddr, error) {
	a = a.Unmap()
	family := unix.AF_INET6
	var sa unix.Sockaddr = &unix.SockaddrInet6{Port: port, Addr: a.As16()}
	if a.Is4() {
		family, sa = unix.AF_INET, &unix.SockaddrInet4{Port: port, Addr: a.As4()}
	}
	// Not every Unix has SOCK_CLOEXEC: under ForkLock, as package net
	// does there, no node started meanwhile inherits the socket.
	syscall.ForkLock.RLock()
	fd, err := unix.Socket(family, unix.SOCK_STREAM, 0)
	if err == nil {
		unix.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	return fd, sa, err
}

func connect(ctx context.Context, a netip.Addr, port int) (int, error) {
	fd, sa, err := StreamSocket(a, port)
	if err != nil {
		return -1, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, err
	}
	err = unix.Connect(fd, sa)
	if err == unix.EINPROGRESS || err == unix.EINTR {
		if err = await(ctx, fd, unix.POLLOUT); err == nil {
			var soerr int
			if soerr, err = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR); err == nil && soerr != 0 {
				err = unix.Errno(soerr)
			}
		}
	}
	if err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("connect %s: %w", netip.AddrPortFrom(a, uint16(port)), err)
	}
	return fd, nil
}

// errTimeout: ctx's deadline came first.
var errTimeout = errors.New("timed out")

// await polls fd for events until ctx's deadline (at most 10 s).
func await(ctx context.Context, fd int, events int16) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(10 * time.Second)
	}
	for {
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil {
			return errTimeout
		}
		pfd := []unix.PollFd{{Fd: int32(fd), Events: events}}
		n, err := unix.Poll(pfd, int(left/time.Millisecond)+1)
		if err == unix.EINTR || n == 0 {
			continue
		}
		return err
	}
}

// checkTCP: a connection to hostport is accepted.
func checkTCP(ctx context.Context, hostport string) error {
	fd, err := dialTCP(ctx, hostport)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

// checkHTTP: a GET of rawURL (http only) answers 2xx.
func checkHTTP(ctx context.Context, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	hostport := u.Host
	if u.Port() == "" {
		hostport = u.Host + ":80"
	}
	fd, err := dialTCP(ctx, hostport)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	req := []byte("GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\nUser-Agent: multi\r\nAccept: */*\r\nConnection: close\r\n\r\n")
	for len(req) > 0 {
		n, err := unix.Write(fd, req)
		if err == unix.EAGAIN || err == unix.EINTR {
			if err := await(ctx, fd, unix.POLLOUT); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		req = req[n:]
	}
	// The status line is all that counts.
	var got []byte
	buf := make([]byte, 512)
	for !bytes.Contains(got, []byte("\r\n")) && len(got) < 4096 {
		n, err := unix.Read(fd, buf)
		if err == unix.EAGAIN || err == unix.EINTR {
			if err := await(ctx, fd, unix.POLLIN); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
		got = append(got, buf[:n]...)
	}
	line, _, _ := bytes.Cut(got, []byte("\r\n"))
	f := bytes.Fields(line)
	if len(f) < 2 || !bytes.HasPrefix(f[0], []byte("HTTP/")) {
		return fmt.Errorf("no HTTP answer")
	}
	code, err := strconv.Atoi(string(f[1]))
	if err != nil || code < 200 || code > 299 {
		return fmt.Errorf("answered %s", bytes.Join(f[1:], []byte(" ")))
	}
	return nil
}
