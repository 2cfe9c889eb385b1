package cgroup

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// The waits for an empty cgroup (WaitEmpty) watch the cgroup's
// cgroup.events with inotify, the kernel telling each change of its
// populated line, and read the file again at each wake-up before acting
// on it, as systemd does (an event can be spurious, or stand for several
// changes). One inotify instance serves the whole process, so that a stop
// of many nodes costs one descriptor for all their watches; where there
// is none (no descriptor, no watch left), the wait polls.

// notifier is the process's inotify instance and its waiters.
type notifier struct {
	mu   sync.Mutex
	f    *os.File
	subs map[int32]map[chan struct{}]bool
}

var (
	notifyOnce sync.Once
	notify     *notifier
	notifyErr  error
)

// watchEvents wakes the returned channel at each change of cgroup.events
// in the cgroup folder f, until stop is called.
func watchEvents(f *os.File) (wake chan struct{}, stop func(), err error) {
	notifyOnce.Do(func() {
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
		if err != nil {
			notifyErr = fmt.Errorf("inotify: %w", err)
			return
		}
		notify = &notifier{f: os.NewFile(uintptr(fd), "inotify"), subs: map[int32]map[chan struct{}]bool{}}
		go notify.read()
	})
	if notifyErr != nil {
		return nil, nil, notifyErr
	}
	n := notify
	// Through the folder's descriptor: the walk that reached it is the
	// only path taken.
	path := fmt.Sprintf("/proc/self/fd/%d/cgroup.events", f.Fd())
	n.mu.Lock()
	defer n.mu.Unlock()
	wd, err := unix.InotifyAddWatch(int(n.f.Fd()), path, unix.IN_MODIFY)
	if err != nil {
		return nil, nil, fmt.Errorf("inotify: %s: %w", f.Name(), err)
	}
	w := int32(wd)
	wake = make(chan struct{}, 1)
	if n.subs[w] == nil {
		n.subs[w] = map[chan struct{}]bool{}
	}
	n.subs[w][wake] = true
	stop = func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		if s := n.subs[w]; s != nil && s[wake] {
			delete(s, wake)
			if len(s) == 0 {
				delete(n.subs, w)
				unix.InotifyRmWatch(int(n.f.Fd()), uint32(w)) // gone with its folder: EINVAL
			}
		}
	}
	return wake, stop, nil
}

// read wakes the waiters of each event's watch; a watch the kernel ended
// (its folder removed) wakes them too, and is forgotten.
func (n *notifier) read() {
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	for {
		k, err := n.f.Read(buf)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			n.wakeAll()
			return
		}
		n.mu.Lock()
		for off := 0; off+unix.SizeofInotifyEvent <= k; {
			wd := int32(binary.NativeEndian.Uint32(buf[off:]))
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			size := int(binary.NativeEndian.Uint32(buf[off+12:]))
			for c := range n.subs[wd] {
				select {
				case c <- struct{}{}:
				default:
				}
			}
			if mask&unix.IN_IGNORED != 0 {
				delete(n.subs, wd)
			}
			if mask&unix.IN_Q_OVERFLOW != 0 {
				n.wakeAllLocked()
			}
			off += unix.SizeofInotifyEvent + size
		}
		n.mu.Unlock()
	}
}

func (n *notifier) wakeAll() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.wakeAllLocked()
}

func (n *notifier) wakeAllLocked() {
	for _, s := range n.subs {
		for c := range s {
			select {
			case c <- struct{}{}:
			default:
			}
		}
	}
}
