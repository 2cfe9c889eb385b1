package waiter_test

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/nodes/pidfile"
	"github.com/multi-launcher/multi/waiter"
)

// WaitEach reports each target the moment its holder dies, while more may
// still come (in is open), and none while its lock is held; it returns
// once in is closed and all are over. With a poll too slow to matter, a
// pidfd on the holder must do it (Linux).
func TestWaitEach(t *testing.T) {
	t.Parallel()
	for name, s := range map[string]waiter.Strategy{
		"poll":       waiter.Poll{},
		"slowpoll":   waiter.Poll{First: time.Hour, Max: time.Hour},
		"notify":     waiter.Notify{},
		"slownotify": waiter.Notify{Poll: waiter.Poll{First: time.Hour, Max: time.Hour}},
	} {
		if strings.HasPrefix(name, "slow") && !pidfdWakeups {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			pa, pb := filepath.Join(dir, "a.pid"), filepath.Join(dir, "b.pid")
			a, b := hold(t, pa), hold(t, pb)
			in := make(chan waiter.Target, 2)
			done := make(chan waiter.Target, 2)
			returned := make(chan error, 1)
			go func() {
				left, err := waiter.WaitEach(t.Context(), in, s, func(tg waiter.Target, err error) {
					if err != nil {
						t.Errorf("%s: %v", tg.Path, err)
					}
					done <- tg
				})
				if len(left) != 0 {
					t.Errorf("WaitEach left %d targets", len(left))
				}
				returned <- err
			}()
			in <- waiter.Target{Path: pa, PID: a.cmd.Process.Pid}
			in <- waiter.Target{Path: pb, PID: b.cmd.Process.Pid}
			expect := func(path string) {
				t.Helper()
				select {
				case tg := <-done:
					if tg.Path != path {
						t.Fatalf("done %s; want %s", tg.Path, path)
					}
				case <-time.After(probablyStillBlocked):
					t.Fatalf("%s not reported after its holder died", path)
				}
			}
			select {
			case tg := <-done:
				t.Fatalf("%s reported while its lock was held", tg.Path)
			case <-time.After(quiescent):
			}
			a.cmd.Process.Signal(syscall.SIGKILL)
			expect(pa) // in is still open
			b.cmd.Process.Signal(syscall.SIGKILL)
			expect(pb)
			close(in)
			select {
			case err := <-returned:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(probablyStillBlocked):
				t.Fatal("WaitEach still running after in was closed and all were over")
			}
		})
	}
}

// WaitEach ended by ctx returns ctx's error, and hands back the target
// still held with the handle it came with, open, and (Linux) the pidfd
// that watched its holder, for a SIGKILL round on the same files.
func TestWaitEachCancel(t *testing.T) {
	t.Parallel()
	for _, s := range []waiter.Strategy{waiter.Poll{}, waiter.Notify{}} {
		path := filepath.Join(t.TempDir(), "c.pid")
		h := hold(t, path)
		ph, err := pidfile.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		in := make(chan waiter.Target, 1)
		in <- waiter.Target{Path: path, PID: h.cmd.Process.Pid, Handle: ph}
		var left []waiter.Target
		finish := mustBlock(t, func() error {
			var err error
			left, err = waiter.WaitEach(ctx, in, s, nil)
			return err
		})
		cancel()
		if err := finish(); err != context.Canceled {
			t.Fatalf("%T: got %v; want context.Canceled", s, err)
		}
		if len(left) != 1 || left[0].Path != path || left[0].Handle != ph {
			t.Fatalf("%T: left %+v; want the target with its handle", s, left)
		}
		if state, pid, err := ph.Holder(); err != nil || state != pidfile.Running || pid != h.cmd.Process.Pid {
			t.Fatalf("%T: handle handed back: %v %d %v; want the holder", s, state, pid, err)
		}
		if pidfdWakeups && left[0].Pidfd == nil {
			t.Fatalf("%T: no pidfd handed back", s)
		}
		ph.Close()
		if left[0].Pidfd != nil {
			left[0].Pidfd.Close()
		}
	}
}

// A holder that lets go of its lock without exiting gives no pidfd
// wake-up: WaitEach still sees the lock released, through the rounds that
// stay underneath the pidfds, with poll and with notify (no fsnotify event
// either: the file is left as it is).
func TestWaitEachLockDropped(t *testing.T) {
	t.Parallel()
	for name, s := range map[string]waiter.Strategy{"poll": waiter.Poll{}, "notify": waiter.Notify{}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "d.pid")
			h := hold(t, "drop:"+path)
			ph, err := pidfile.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			in := make(chan waiter.Target, 1)
			in <- waiter.Target{Path: path, PID: h.cmd.Process.Pid, Handle: ph}
			close(in)
			reported := 0
			finish := mustBlock(t, func() error {
				_, err := waiter.WaitEach(t.Context(), in, s, func(_ waiter.Target, err error) {
					if err != nil {
						t.Error(err)
					}
					reported++
				})
				return err
			})
			h.stdin.Close() // the holder lets go of the lock and lives on
			if err := finish(); err != nil {
				t.Fatal(err)
			}
			if reported != 1 {
				t.Fatalf("reported %d times; want 1", reported)
			}
			if err := h.cmd.Process.Signal(syscall.Signal(0)); err != nil {
				t.Fatalf("holder gone (%v): the test is not of a lock dropped by a live process", err)
			}
		})
	}
}
