//go:build unix

package supervise

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/ready"
	"golang.org/x/sys/unix"
)

// The health endpoints (--health=ADDR): /readyz, /livez and /metrics
// for the engines above a run (a kubelet's probes, Prometheus). A small
// HTTP/1.1 server on raw sockets in Go's poller: package net (and
// net/http) would link the cgo resolver, making multi a dynamic binary
// whose every exec step pays for ld.so (docs/benchmarks.md).

// healthNode is one node as the endpoints see it.
type healthNode struct {
	name             string
	up, ready, fatal bool
	restarts         int
	since            time.Time
	lastExit, exits  int
	cgroup           string // its cgroup's path, "" for none
}

// healthState is what the loop last published.
type healthState struct {
	ready, stopping bool
	nodes           []healthNode
	rundir          string
}

// publish hands the endpoints the run's state; called by the loop.
func (r *run) publish() {
	if r.health == nil {
		return
	}
	// Ready: the run was, and every node still is (none down, none
	// starting again).
	s := &healthState{ready: r.ready && !r.stopping, stopping: r.stopping, rundir: r.o.RunDir}
	for _, rn := range r.nodes {
		n := healthNode{name: rn.n.Name, up: rn.pid > 0, ready: rn.pid > 0 && !rn.starting,
			fatal: rn.fatal, restarts: rn.restartsTotal, since: rn.since, lastExit: rn.lastExit, exits: rn.exits, cgroup: rn.n.Cgroup}
		s.ready = s.ready && n.ready
		s.nodes = append(s.nodes, n)
	}
	r.health.state.Store(s)
}

// checkFiles parses each node's liveness check, reaches the ready
// file's folder and opens the health endpoints' socket, before anything
// starts: a run that cannot do what it was asked starts nothing.
func (r *run) checkFiles() error {
	if err := r.parseLive(); err != nil {
		return err
	}
	if err := r.checkReadyFile(); err != nil {
		return err
	}
	if r.o.Health == "" {
		return nil
	}
	h, err := listenHealth(r.o.Health)
	if err != nil {
		return err
	}
	r.health = h
	return nil
}

// closeHealth stops the health endpoints, if served.
func (r *run) closeHealth() {
	if r.health != nil {
		r.health.Close()
	}
}

// healthServer serves the endpoints until closed.
type healthServer struct {
	f     *os.File
	state atomic.Pointer[healthState]
	// conns are the connections open, oldest first: at most healthConns,
	// so that idle clients never hold the run's descriptors (which its
	// nodes' starts and stops need) nor keep a probe from being answered.
	mu    sync.Mutex
	conns []*os.File
}

// listenHealth listens on addr: ADDRESS:PORT (numeric, or localhost) or
// :PORT (every address).
func listenHealth(addr string) (*healthServer, error) {
	i := strings.LastIndexByte(addr, ':')
	port, err := strconv.Atoi(addr[i+1:])
	if i < 0 || err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("--health %q: want ADDRESS:PORT or :PORT", addr)
	}
	host := strings.TrimSuffix(strings.TrimPrefix(addr[:i], "["), "]")
	a := netip.IPv6Unspecified() // :PORT: every address, v4 and v6
	if host == "localhost" {
		host = "127.0.0.1"
	}
	if host != "" {
		if a, err = netip.ParseAddr(host); err != nil {
			return nil, fmt.Errorf("--health %q: %q is not a numeric address or localhost", addr, host)
		}
	}
	fd, sa, err := ready.StreamSocket(a, port)
	if err != nil {
		return nil, fmt.Errorf("--health %s: %w", addr, err)
	}
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("--health %s: %w", addr, err)
	}
	// A backlog deep enough that a burst of clients never has a probe's SYN
	// dropped (and sent again a second later).
	if err := unix.Listen(fd, 1024); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("--health %s: %w", addr, err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	h := &healthServer{f: os.NewFile(uintptr(fd), "health")}
	h.state.Store(&healthState{})
	go h.serve()
	return h, nil
}

// Close stops the server.
func (h *healthServer) Close() { h.f.Close() }

func (h *healthServer) serve() {
	rc, err := h.f.SyscallConn()
	if err != nil {
		return
	}
	for {
		var nfd int
		var aerr error
		if err := rc.Read(func(fd uintptr) bool {
			syscall.ForkLock.RLock()
			nfd, _, aerr = unix.Accept(int(fd))
			if aerr == nil {
				unix.CloseOnExec(nfd)
			}
			syscall.ForkLock.RUnlock()
			return aerr != unix.EAGAIN
		}); err != nil {
			return // closed
		}
		if aerr == unix.EMFILE || aerr == unix.ENFILE || aerr == unix.ENOBUFS || aerr == unix.ENOMEM {
			// Out of descriptors or memory: the connection waits in
			// the backlog; retried at once, the loop would spin.
			time.Sleep(acceptPause)
			continue
		}
		if aerr != nil {
			continue
		}
		if unix.SetNonblock(nfd, true) != nil {
			unix.Close(nfd)
			continue
		}
		c := os.NewFile(uintptr(nfd), "health-conn")
		h.admit(c)
		go h.answer(c)
	}
}

// healthIO bounds reading a request and writing its answer: a probe
// sends its request at once; acceptPause is the accept loop's pause when
// descriptors run short; healthConns bounds the connections open at once.
const (
	healthIO    = time.Second
	acceptPause = 50 * time.Millisecond
	healthConns = 64
)

// admit counts c among the connections open, closing the oldest when
// there are healthConns already: it has had the longest to send its
// request, and the newest is the likeliest to be a probe waiting.
func (h *healthServer) admit(c *os.File) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.conns) >= healthConns {
		h.conns[0].Close() // its answer's read ends; it leaves the list
		h.conns = h.conns[1:]
	}
	h.conns = append(h.conns, c)
}

// done closes c and forgets it.
func (h *healthServer) done(c *os.File) {
	h.mu.Lock()
	if i := slices.Index(h.conns, c); i >= 0 {
		h.conns = slices.Delete(h.conns, i, i+1)
	}
	h.mu.Unlock()
	c.Close()
}

// open is how many connections are open.
func (h *healthServer) open() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// answer reads one request and answers it.
func (h *healthServer) answer(c *os.File) {
	defer h.done(c)
	c.SetDeadline(time.Now().Add(healthIO))
	var req []byte
	buf := make([]byte, 1024)
	for !bytes.Contains(req, []byte("\r\n\r\n")) && !bytes.Contains(req, []byte("\n\n")) && len(req) < 8192 {
		n, err := c.Read(buf)
		req = append(req, buf[:n]...)
		if err != nil {
			break
		}
	}
	line, _, _ := bytes.Cut(req, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) == 0 {
		return // no request (a TCP probe, a client gone): nothing to answer
	}
	code, ctype, body := 404, "text/plain; charset=utf-8", "not found\n"
	if len(f) < 2 || (f[0] != "GET" && f[0] != "HEAD") {
		code, body = 405, "GET only\n"
	} else {
		path, _, _ := strings.Cut(f[1], "?")
		s := h.state.Load()
		switch path {
		case "/readyz":
			code, body = verdict(s.ready, "every node is ready\n", notReady(s))
		case "/livez":
			code, body = verdict(!s.stopping && fatal(s) == "", "alive\n", "not alive: "+fatal(s)+"\n")
		case "/metrics":
			code, ctype, body = 200, "text/plain; version=0.0.4; charset=utf-8", metrics(s)
		}
	}
	if f[0] == "HEAD" {
		body = ""
	}
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		code, statusText(code), ctype, len(body), body)
}

func verdict(ok bool, yes, no string) (int, string) {
	if ok {
		return 200, yes
	}
	return 503, no
}

func statusText(code int) string {
	switch code {
	case 200:
		return "OK"
	case 404:
		return "Not Found"
	case 405:
		return "Method Not Allowed"
	}
	return "Service Unavailable"
}

// notReady says which nodes are not ready.
func notReady(s *healthState) string {
	var names []string
	for _, n := range s.nodes {
		if !n.ready {
			names = append(names, n.name)
		}
	}
	if s.stopping {
		return "stopping\n"
	}
	return "not ready: " + strings.Join(names, " ") + "\n"
}

// fatal names the nodes in a crash loop (--max-restarts), "" if none.
func fatal(s *healthState) string {
	var names []string
	for _, n := range s.nodes {
		if n.fatal {
			names = append(names, n.name+" is fatal (crash loop)")
		}
	}
	return strings.Join(names, ", ")
}
