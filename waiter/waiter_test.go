package waiter_test

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/nodes/pidfile"
	"github.com/multi-launcher/multi/waiter"
)

const (
	quiescent            = 10 * time.Millisecond
	probablyStillBlocked = 10 * time.Second
)

func TestMain(m *testing.M) {
	if v := os.Getenv(holdManyEnv); v != "" {
		holdMany(v)
	}
	testutil.ServeRoles() // the holders of testutil.StartHolder
	os.Exit(m.Run())
}

type holderProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// hold starts a process that holds the lock on the pidfile spec names
// (testutil.StartHolder). Once its stdin is closed it exits and leaves the
// file stale, as a crash would; with "rm:" it removes the file first; with
// "drop:" it lets go of the lock, leaves the file, and lives on.
func hold(t *testing.T, spec string) *holderProc {
	t.Helper()
	end, path := testutil.HoldCrash, spec
	if p, ok := strings.CutPrefix(spec, "rm:"); ok {
		end, path = testutil.HoldRelease, p
	}
	if p, ok := strings.CutPrefix(spec, "drop:"); ok {
		end, path = testutil.HoldDrop, p
	}
	cmd, stdin := testutil.StartHolder(t, path, end)
	return &holderProc{cmd, stdin}
}

// mustBlock starts wait in a goroutine, checks that it has not returned
// after quiescent, and returns a function that waits for its result.
func mustBlock(t *testing.T, wait func() error) func() error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- wait() }()
	select {
	case err := <-done:
		t.Fatalf("returned while the lock was held: %v", err)
	case <-time.After(quiescent):
	}
	return func() error {
		select {
		case err := <-done:
			return err
		case <-time.After(probablyStillBlocked):
			t.Fatal("still blocked after the lock was released")
			return nil
		}
	}
}

var strategies = map[string]waiter.Strategy{
	"poll":   waiter.Poll{},
	"notify": waiter.Notify{},
	// A notify whose poll is too slow to matter: the wake-ups must do it.
	"notify-slowpoll": waiter.Notify{Poll: waiter.Poll{First: time.Hour, Max: time.Hour}},
}

func TestWaitAbsentAndStale(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stale := filepath.Join(dir, "stale.pid")
	// Names a live process (this one), but nobody holds the lock.
	os.WriteFile(stale, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
	for name, s := range strategies {
		for _, path := range []string{filepath.Join(dir, "absent.pid"), stale} {
			if err := waiter.Wait(t.Context(), path, s); err != nil {
				t.Errorf("%s: Wait(%s) = %v", name, filepath.Base(path), err)
			}
		}
	}
}

func TestWaitKilled(t *testing.T) {
	t.Parallel()
	for name, s := range strategies {
		if name == "notify-slowpoll" && !pidfdWakeups {
			continue // SIGKILL leaves no fsnotify event: only a pidfd sees it
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "w.pid")
			h := hold(t, path)
			finish := mustBlock(t, func() error { return waiter.Wait(t.Context(), path, s) })
			h.cmd.Process.Signal(syscall.SIGKILL)
			if err := finish(); err != nil {
				t.Fatal(err)
			}
			// Released before we reaped it; the file stays, stale.
			if info, _ := pidfile.Inspect(path); info.State != pidfile.Stale {
				t.Errorf("after: %v; want stale", info.State)
			}
		})
	}
}

func TestWaitCleanExitRemovesFile(t *testing.T) {
	t.Parallel()
	for name, s := range strategies {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "w.pid")
			h := hold(t, "rm:"+path)
			finish := mustBlock(t, func() error { return waiter.Wait(t.Context(), path, s) })
			h.stdin.Close()
			if err := finish(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestWaitAllTargetPID(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.pid"), filepath.Join(dir, "b.pid")
	ha, hb := hold(t, a), hold(t, b)
	targets := []waiter.Target{
		{Path: a, PID: ha.cmd.Process.Pid},
		// b is held, but by another process than the one awaited (a node
		// restarted by someone else): released as far as we care.
		{Path: b, PID: ha.cmd.Process.Pid},
	}
	var mu sync.Mutex
	var got []string
	finish := mustBlock(t, func() error {
		return waiter.WaitAll(t.Context(), targets, nil, func(tg waiter.Target, err error) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, filepath.Base(tg.Path))
			if err != nil {
				t.Errorf("%s: %v", tg.Path, err)
			}
		})
	})
	// b's result comes without a's holder dying, whenever the wait gets
	// to it: polled for, not timed.
	testutil.PollUntil(t, "b's result", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) > 0
	})
	mu.Lock()
	if len(got) != 1 || got[0] != "b.pid" {
		t.Errorf("released before a died: %v; want [b.pid]", got)
	}
	mu.Unlock()
	ha.cmd.Process.Signal(syscall.SIGKILL)
	if err := finish(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Errorf("done called for %v; want each target once", got)
	}
	_ = hb
}

func TestWaitCancel(t *testing.T) {
	t.Parallel()
	for name, s := range strategies {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "w.pid")
			hold(t, path)
			ctx, cancel := context.WithCancel(t.Context())
			finish := mustBlock(t, func() error { return waiter.Wait(ctx, path, s) })
			cancel()
			if err := finish(); !errors.Is(err, context.Canceled) {
				t.Fatalf("Wait = %v; want context.Canceled", err)
			}
		})
	}
}

func TestWaitBadPidfile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	link := filepath.Join(dir, "link.pid")
	os.Symlink("/etc/hostname", link)
	if err := waiter.Wait(t.Context(), link, nil); !errors.Is(err, pidfile.ErrBadPidfile) {
		t.Fatalf("Wait(symlink) = %v; want ErrBadPidfile", err)
	}
}

// A Target's Handle is what WaitAll tests, not its Path: a pidfile
// unlinked while its holder lives is waited for on the handle, and done
// gets that same handle, still open.
func TestWaitAllGivenHandle(t *testing.T) {
	t.Parallel()
	for name, s := range strategies {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "w.pid")
			hp := hold(t, path)
			h, err := pidfile.OpenToRemove(path)
			if err != nil {
				t.Fatal(err)
			}
			// Opened again, the path would say absent: released at once.
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			var got *pidfile.Handle
			finish := mustBlock(t, func() error {
				return waiter.WaitAll(t.Context(), []waiter.Target{{Path: path, Handle: h}}, s, func(tg waiter.Target, err error) {
					if err != nil {
						t.Errorf("done: %v", err)
					}
					got = tg.Handle
					if tg.Handle == nil {
						t.Errorf("done got no handle")
					} else if state, _, err := tg.Handle.Holder(); err != nil || state != pidfile.Stale {
						t.Errorf("done's handle: %v, %v; want open, stale", state, err)
					}
				})
			})
			hp.cmd.Process.Signal(syscall.SIGKILL)
			if err := finish(); err != nil {
				t.Fatal(err)
			}
			if got != h {
				t.Errorf("done got handle %p; want the one given, %p", got, h)
			}
		})
	}
}

// With KeepHandle, the handle done gets is done's: still open once
// WaitAll has returned (the caller removes the pidfile through it off
// the waiter's goroutine, and closes it).
func TestWaitAllKeepHandle(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "w.pid")
	hp := hold(t, path)
	h, err := pidfile.OpenToRemove(path)
	if err != nil {
		t.Fatal(err)
	}
	var got *pidfile.Handle
	finish := mustBlock(t, func() error {
		return waiter.WaitAll(t.Context(), []waiter.Target{{Path: path, Handle: h, KeepHandle: true}}, nil, func(tg waiter.Target, err error) {
			if err != nil {
				t.Errorf("done: %v", err)
			}
			got = tg.Handle
		})
	})
	hp.cmd.Process.Signal(syscall.SIGKILL)
	if err := finish(); err != nil {
		t.Fatal(err)
	}
	if got == nil {
		t.Fatal("done got no handle")
	}
	defer got.Close()
	if state, _, err := got.Holder(); err != nil || state != pidfile.Stale {
		t.Fatalf("the kept handle after WaitAll: %v, %v; want open, stale", state, err)
	}
}
