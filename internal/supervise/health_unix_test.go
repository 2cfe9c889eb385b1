//go:build unix

package supervise

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/testutil"
)

// Idle connections never hold the health server's descriptors: with
// many more open than it keeps, the oldest are closed, at most
// healthConns stay open, and a probe that comes after them all is
// answered.
func TestHealthIdleConnectionsCapped(t *testing.T) {
	h, err := listenHealth("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	sa, err := unix.Getsockname(int(h.f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(sa.(*unix.SockaddrInet4).Port)
	const idle = 4 * healthConns
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range idle {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c) // sends nothing
	}
	probe, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	probe.SetDeadline(time.Now().Add(testutil.PollTimeout))
	if _, err := probe.Write([]byte("GET /livez HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(probe).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 200 ") {
		t.Fatalf("the probe after %d idle connections: %q, %v; want 200", idle, line, err)
	}
	// Every idle connection was accepted before the probe's: the server
	// has seen them all by now.
	if n := h.open(); n > healthConns {
		t.Errorf("%d connections open on the server; want at most %d", n, healthConns)
	}
	conns[0].SetReadDeadline(time.Now().Add(testutil.PollTimeout))
	if n, err := conns[0].Read(make([]byte, 1)); n != 0 || err == nil {
		t.Errorf("the oldest idle connection: read %d, %v; want it closed by the server", n, err)
	}
}
