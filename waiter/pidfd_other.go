//go:build !linux

package waiter

import "context"

// watchPidfds has no pidfds to watch outside Linux; polling and fsnotify
// carry the wait.
func watchPidfds(ctx context.Context, pids []int, wake chan<- int) (stop func()) {
	return func() {}
}
