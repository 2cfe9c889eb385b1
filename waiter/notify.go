package waiter

import (
	"context"
	"errors"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// watchFolders watches the folder of every target and sends a target's
// index on wake whenever something happens to its pidfile's name: created,
// written, removed, renamed or chmodded. It signals overflow when events
// were lost, so that the caller tests every lock. If fsnotify cannot be
// used here, it watches nothing and the caller's polling carries on alone.
func watchFolders(ctx context.Context, targets []Target, wake chan<- int, overflow chan<- struct{}) (stop func()) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return func() {}
	}
	byName := make(map[string][]int, len(targets))
	dirs := map[string]bool{}
	for i, t := range targets {
		p := filepath.Clean(t.Path)
		byName[p] = append(byName[p], i)
		if d := filepath.Dir(p); !dirs[d] {
			dirs[d] = true
			_ = w.Add(d) // a folder that cannot be watched is polled
		}
	}
	signalOverflow := func() {
		select {
		case overflow <- struct{}{}:
		default:
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				for _, i := range byName[filepath.Clean(ev.Name)] {
					select {
					case wake <- i:
					default:
						signalOverflow()
					}
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				if errors.Is(err, fsnotify.ErrEventOverflow) {
					signalOverflow()
				}
			}
		}
	}()
	return func() {
		// The caller has cancelled ctx, so the loop above ends without
		// Close. Closing an inotify instance can block for milliseconds
		// in the kernel, longer than the whole wait often takes: it is
		// done in the background.
		wg.Wait()
		go w.Close()
	}
}
