//go:build unix

package multi

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// checkReady signals readiness once every node runs.
func (r *run) checkReady() {
	if r.ready || r.stopping {
		return
	}
	for _, rn := range r.nodes {
		if rn.pid <= 0 {
			return
		}
	}
	r.ready = true
	if r.o.ReadyFile != "" {
		if err := os.WriteFile(r.o.ReadyFile, []byte("ready\n"), 0o644); err != nil {
			r.logf("ready file: %v", err)
		}
	}
	r.notify("READY=1")
	r.logf("every node holds its lock: ready")
}

// notify sends a state to the notify socket (sd_notify(3)), if there is
// one.
func (r *run) notify(state string) {
	if r.notifyAddr == "" {
		return
	}
	if err := sdNotify(r.notifyAddr, state); err != nil {
		r.logf("notify socket %s: %v", r.notifyAddr, err)
	}
}

// sdNotify sends one datagram to the unix socket addr; a name starting
// with '@' is in the abstract namespace (unix.SockaddrUnix maps it).
//
// Raw system calls, not package net: net links the cgo resolver, which
// makes the binary dynamic, and every exec step (one per node started)
// would then pay for ld.so and glibc's start-up, about a third of its
// CPU on this machine (docs/benchmarks.md).
func sdNotify(addr, state string) error {
	// Not every Unix has SOCK_CLOEXEC: under ForkLock, as package net
	// does there, no node started meanwhile inherits the socket.
	syscall.ForkLock.RLock()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
	if err == nil {
		unix.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Sendto(fd, []byte(state), 0, &unix.SockaddrUnix{Name: addr})
}
