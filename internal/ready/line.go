package ready

import (
	"errors"
	"os"
	"sync"
)

// A Line is s6's readiness protocol (notification-fd) seen from the
// launcher: the node is ready once it has written a line to its end of
// a pipe; closing it first says it never will be.
type Line struct {
	wake chan struct{}

	mu    sync.Mutex
	ready bool
	err   error
}

// maxNotifyLine bounds what is read waiting for the newline.
const maxNotifyLine = 4096

// WatchLine reads r, the pipe's read end, until a newline, its end, or
// an error (r closed by the caller).
func WatchLine(r *os.File, fd string) *Line {
	l := &Line{wake: make(chan struct{}, 1)}
	go func() {
		buf := make([]byte, 512)
		total := 0
		for {
			k, err := r.Read(buf)
			total += k
			for _, b := range buf[:k] {
				if b == '\n' {
					l.set(true, nil)
					return
				}
			}
			if err != nil || total > maxNotifyLine {
				l.set(false, errors.New("it closed descriptor "+fd+" without writing a line"))
				return
			}
		}
	}()
	return l
}

func (l *Line) set(ready bool, err error) {
	l.mu.Lock()
	l.ready, l.err = ready, err
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Wake is readable when the state has changed.
func (l *Line) Wake() <-chan struct{} { return l.wake }

// State says whether the line came, or why it never will.
func (l *Line) State() (ready bool, status string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ready, "", l.err
}
