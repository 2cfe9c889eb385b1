//go:build !linux

package waiter

import (
	"context"
	"os"
)

// A pidfdWatcher watches nothing outside Linux: polling and fsnotify carry
// the wait.
type pidfdWatcher struct{}

func newPidfdWatcher(context.Context, chan<- int, int) *pidfdWatcher { return &pidfdWatcher{} }

func (*pidfdWatcher) add(i, pid int) bool { return false }

// adopt takes f over; there is nothing to watch it with here.
func (*pidfdWatcher) adopt(i int, f *os.File) bool {
	f.Close()
	return false
}

func (*pidfdWatcher) drop(i int)           {}
func (*pidfdWatcher) pidfd(i int) *os.File { return nil }

// pidfdExited: there are no pidfds here to say otherwise.
func pidfdExited(f *os.File) bool                  { return true }
func (*pidfdWatcher) release(i int) *os.File       { return nil }
func (*pidfdWatcher) watching(i int) bool          { return false }
func (*pidfdWatcher) settle(i int, given *os.File) {}
func (*pidfdWatcher) stop()                        {}
