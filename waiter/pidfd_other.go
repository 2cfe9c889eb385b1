//go:build !linux

package waiter

import "context"

// watchPidfds has no pidfds to watch outside Linux; polling and fsnotify
// carry the wait.
func watchPidfds(ctx context.Context, pids []int, wake chan<- int) (stop func()) {
	return func() {}
}

// A pidfdWatcher watches nothing outside Linux.
type pidfdWatcher struct{}

func newPidfdWatcher(context.Context, chan<- int, int) *pidfdWatcher { return &pidfdWatcher{} }

func (*pidfdWatcher) add(i, pid int) bool { return false }

func (*pidfdWatcher) stop() {}
