package waiter_test

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/waiter"
)

// WaitEach reports each target the moment its holder dies, while more may
// still come (in is open), and none while its lock is held; it returns
// once in is closed and all are over. With a poll too slow to matter, a
// pidfd on the holder must do it (Linux).
func TestWaitEach(t *testing.T) {
	t.Parallel()
	for name, s := range map[string]waiter.Strategy{
		"poll":     waiter.Poll{},
		"slowpoll": waiter.Poll{First: time.Hour, Max: time.Hour},
	} {
		if name == "slowpoll" && !pidfdWakeups {
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
				returned <- waiter.WaitEach(t.Context(), in, s, func(tg waiter.Target, err error) {
					if err != nil {
						t.Errorf("%s: %v", tg.Path, err)
					}
					done <- tg
				})
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

// WaitEach ended by ctx returns ctx's error.
func TestWaitEachCancel(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "c.pid")
	h := hold(t, path)
	ctx, cancel := context.WithCancel(t.Context())
	in := make(chan waiter.Target, 1)
	in <- waiter.Target{Path: path, PID: h.cmd.Process.Pid}
	finish := mustBlock(t, func() error { return waiter.WaitEach(ctx, in, waiter.Poll{}, nil) })
	cancel()
	if err := finish(); err != context.Canceled {
		t.Fatalf("got %v; want context.Canceled", err)
	}
}
