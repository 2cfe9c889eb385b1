//go:build unix

package multi

import (
	"net"
	"os"
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
// with '@' is in the abstract namespace.
func sdNotify(addr, state string) error {
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = conn.Write([]byte(state))
	return err
}
