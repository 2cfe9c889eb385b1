package waiter

import (
	"context"
	"errors"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// A folderWatcher watches the folder of each target added and sends a
// target's index on wake whenever something happens to its pidfile's name:
// created, written, removed, renamed or chmodded. It signals overflow when
// events were lost, so that the caller tests every lock. If fsnotify
// cannot be used here, it watches nothing and the caller's polling carries
// on alone.
type folderWatcher struct {
	w        *fsnotify.Watcher // nil if fsnotify cannot be used
	mu       sync.Mutex        // guards byName and dirs
	byName   map[string][]int
	dirs     map[string]bool
	wg       sync.WaitGroup
	wake     chan<- int
	overflow chan<- struct{}
}

func newFolderWatcher(ctx context.Context, wake chan<- int, overflow chan<- struct{}) *folderWatcher {
	fw := &folderWatcher{byName: map[string][]int{}, dirs: map[string]bool{}, wake: wake, overflow: overflow}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fw
	}
	fw.w = w
	fw.wg.Add(1)
	go fw.loop(ctx)
	return fw
}

// add watches target i's pidfile, at path, through its folder.
func (fw *folderWatcher) add(i int, path string) {
	if fw.w == nil {
		return
	}
	p := filepath.Clean(path)
	fw.mu.Lock()
	fw.byName[p] = append(fw.byName[p], i)
	d := filepath.Dir(p)
	watched := fw.dirs[d]
	fw.dirs[d] = true
	fw.mu.Unlock()
	if !watched {
		_ = fw.w.Add(d) // a folder that cannot be watched is polled
	}
}

func (fw *folderWatcher) signalOverflow() {
	select {
	case fw.overflow <- struct{}{}:
	default:
	}
}

func (fw *folderWatcher) loop(ctx context.Context) {
	defer fw.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-fw.w.Events:
			if !ok {
				return
			}
			fw.mu.Lock()
			is := fw.byName[filepath.Clean(ev.Name)]
			fw.mu.Unlock()
			for _, i := range is {
				select {
				case fw.wake <- i:
				default:
					fw.signalOverflow()
				}
			}
		case err, ok := <-fw.w.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				fw.signalOverflow()
			}
		}
	}
}

// stop ends the watch; the caller has cancelled ctx.
func (fw *folderWatcher) stop() {
	if fw.w == nil {
		return
	}
	// The loop above ends without Close. Closing an inotify instance can
	// block for milliseconds in the kernel, longer than the whole wait
	// often takes: it is done in the background.
	fw.wg.Wait()
	go fw.w.Close()
}
