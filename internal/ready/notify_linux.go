package ready

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/multi-launcher/multi/internal/safefs"
	"golang.org/x/sys/unix"
)

// A Notify is a node's own notify socket (systemd's sd_notify protocol):
// a unixgram socket in the rundir, named in the node's $NOTIFY_SOCKET.
// Only datagrams whose sender (its credentials, which the kernel gives)
// is the node's process, or a process of its session, count: another
// process that can reach the socket cannot make a node ready.
type Notify struct {
	f    *os.File // the socket, non-blocking, in Go's poller
	dir  string
	name string
	made os.FileInfo // its name in dir, as bound: removed only while it is that
	wake chan struct{}

	closed sync.Once
	mu     sync.Mutex
	ready  bool
	status string
	err    error
}

// maxSocketPath is the room for a socket's path (sun_path, less its NUL).
const maxSocketPath = 107

// ListenNotify makes the notify socket of the node named name in rundir.
func ListenNotify(rundir, name string) (*Notify, error) {
	base := "." + name + ".notify"
	path := filepath.Join(rundir, base)
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("notify socket %s: path longer than %d bytes (a shorter --rundir)", path, maxSocketPath)
	}
	// A socket left by a start that died; through the no-link walk.
	if err := safefs.RemoveIn(rundir, base); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("notify socket %s: %w", path, err)
	}
	// Raw system calls, not package net (see dial_unix.go).
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("notify socket: %w", err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PASSCRED, 1); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("notify socket %s: %w", path, err)
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("notify socket %s: %w", path, err)
	}
	made, err := os.Lstat(path)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("notify socket %s: %w", path, err)
	}
	return &Notify{f: os.NewFile(uintptr(fd), path), dir: rundir, name: base, made: made, wake: make(chan struct{}, 1)}, nil
}

// Env is the entry of the node's environment that names the socket.
func (n *Notify) Env() string { return "NOTIFY_SOCKET=" + filepath.Join(n.dir, n.name) }

// Wake is readable when a message has changed the state.
func (n *Notify) Wake() <-chan struct{} { return n.wake }

// State is what the node has said: READY=1 seen, its last STATUS=, and
// the error of a STOPPING=1 or ERRNO=; before READY=1, [ErrSocketGone]
// once the socket's name is no longer this socket.
func (n *Notify) State() (ready bool, status string, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.ready && n.err == nil {
		if cur, err := os.Lstat(filepath.Join(n.dir, n.name)); err != nil || !os.SameFile(cur, n.made) {
			n.err = fmt.Errorf("%w: %s", ErrSocketGone, filepath.Join(n.dir, n.name))
		}
	}
	return n.ready, n.status, n.err
}

// notifyMax is the longest message read whole, as systemd's
// NOTIFY_BUFFER_MAX (PIPE_BUF); a longer one is cut there.
const notifyMax = 4096

// notifyBufs are the buffers Watch reads messages into.
var notifyBufs = sync.Pool{New: func() any { return new([notifyMax]byte) }}

// Watch reads the socket, until Close, taking the messages that pid (the
// node's process) or a process of its session sends.
func (n *Notify) Watch(pid int) {
	rc, err := n.f.SyscallConn()
	if err != nil {
		return
	}
	go func() {
		oob := make([]byte, unix.CmsgSpace(unix.SizeofUcred))
		for {
			var msg string
			var ok int
			var rerr error
			if err := rc.Read(func(fd uintptr) bool {
				// A buffer only while a message is read: a start of 1000
				// nodes waits on 1000 sockets.
				buf := notifyBufs.Get().(*[notifyMax]byte)
				var k int
				k, ok, _, _, rerr = unix.Recvmsg(int(fd), buf[:], oob, 0)
				if rerr == nil {
					msg = string(buf[:k])
				}
				notifyBufs.Put(buf)
				return rerr != unix.EAGAIN
			}); err != nil {
				return // closed
			}
			if rerr != nil {
				continue
			}
			if from := sender(oob[:ok]); from <= 0 || from != pid && sid(from) != pid {
				continue // not the node's: ignored
			}
			n.take(msg)
		}
	}()
}

// sender is the pid in a message's credentials, 0 if none.
func sender(oob []byte) int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return 0
	}
	for i := range msgs {
		if cred, err := unix.ParseUnixCredentials(&msgs[i]); err == nil {
			return int(cred.Pid)
		}
	}
	return 0
}

func sid(pid int) int {
	s, err := unix.Getsid(pid)
	if err != nil {
		return -1
	}
	return s
}

// take applies one message, lines of KEY=VALUE.
func (n *Notify) take(msg string) {
	n.mu.Lock()
	for _, line := range strings.Split(msg, "\n") {
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "READY":
			n.ready = n.ready || v == "1"
		case "STATUS":
			n.status = v
		case "STOPPING":
			if v == "1" && n.err == nil {
				n.err = errors.New("it said STOPPING=1")
			}
		case "ERRNO":
			if e, err := strconv.Atoi(v); err == nil && n.err == nil {
				n.err = fmt.Errorf("it said ERRNO=%d (%w)", e, syscall.Errno(e))
			}
		}
	}
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// Close closes the socket and removes it, if its name is still this
// socket's: a start of the node since (a restart under run) binds a new
// one there, which must stay. Again, it does nothing.
func (n *Notify) Close() {
	n.closed.Do(func() {
		n.f.Close()
		if cur, err := os.Lstat(filepath.Join(n.dir, n.name)); err == nil && os.SameFile(cur, n.made) {
			safefs.RemoveIn(n.dir, n.name)
		}
	})
}
