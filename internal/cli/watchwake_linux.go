package cli

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
	"golang.org/x/sys/unix"
)

// watchWake returns a channel that gets a value soon after a pidfile or a
// record of ns is created, removed or renamed (a start writes both, a
// stopwait removes the pidfile), and the function that stops it. It asks
// inotify for those events only, never for writes (fsnotify always asks
// for them): the nodes' logfiles are in the same folder by default, and
// each line a node logs would wake it. Where inotify cannot watch (no
// watch left, a folder not there yet) the channel stays quiet and the
// looks every interval carry on alone: it only makes them sooner.
func watchWake(rundir string, ns []nodes.Node) (<-chan struct{}, func()) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, func() {}
	}
	f := os.NewFile(uintptr(fd), "inotify") // read through the runtime's poller, so Close ends a Read
	names := map[string]bool{}
	dirs := map[int32]string{} // by watch descriptor
	watched := map[string]bool{}
	for _, n := range ns {
		for _, p := range []string{n.PidFile, record.Path(rundir, n.Name)} {
			p = filepath.Clean(p)
			names[p] = true
			if d := filepath.Dir(p); !watched[d] {
				watched[d] = true
				const events = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_ONLYDIR
				if wd, err := unix.InotifyAddWatch(fd, d, events); err == nil {
					dirs[int32(wd)] = d
				}
			}
		}
	}
	wake := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 16<<10)
		for {
			n, err := f.Read(buf)
			if err != nil {
				return // closed
			}
			if inotifyNames(buf[:n], dirs, names) {
				select {
				case wake <- struct{}{}:
				default:
				}
			}
		}
	}()
	return wake, func() {
		f.Close()
		<-done
	}
}

// inotifyNames reports whether the inotify events in b name one of
// names (a path in a folder of dirs, by watch descriptor), or say that
// events were lost.
func inotifyNames(b []byte, dirs map[int32]string, names map[string]bool) bool {
	for len(b) >= unix.SizeofInotifyEvent {
		wd := int32(binary.NativeEndian.Uint32(b[0:]))
		mask := binary.NativeEndian.Uint32(b[4:])
		size := unix.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(b[12:]))
		if size > len(b) {
			return true // cut short: look
		}
		name := strings.TrimRight(string(b[unix.SizeofInotifyEvent:size]), "\x00")
		if mask&unix.IN_Q_OVERFLOW != 0 || names[filepath.Join(dirs[wd], name)] {
			return true
		}
		b = b[size:]
	}
	return false
}
