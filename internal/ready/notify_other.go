//go:build !linux

package ready

import "errors"

// A Notify is a node's own notify socket; only on Linux, whose sockets
// say who sent a message.
type Notify struct{}

// ListenNotify: only on Linux.
func ListenNotify(rundir, name string) (*Notify, error) {
	return nil, errors.New("--ready=notify: only on Linux")
}

// Env is the entry of the node's environment that names the socket.
func (n *Notify) Env() string { return "" }

// Wake is never readable here.
func (n *Notify) Wake() <-chan struct{} { return nil }

// State is what the node has said.
func (n *Notify) State() (ready bool, status string, err error) { return false, "", nil }

// Watch reads the socket.
func (n *Notify) Watch(pid int) {}

// Close closes the socket.
func (n *Notify) Close() {}
