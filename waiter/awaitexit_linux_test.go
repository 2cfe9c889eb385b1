package waiter_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/nodes/pidfile"
	"github.com/multi-launcher/multi/waiter"
	"golang.org/x/sys/unix"
)

// pidfdCount counts this process's open pidfds.
func pidfdCount(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.Contains(l, "pidfd") {
			n++
		}
	}
	return n
}

// A target that awaits its holder's exit, and whose holder let go of the
// lock before the wait began, is watched through the pidfd it came with
// and no second one: once the wait returns, none of its pidfds is left
// open. Not parallel: the other tests' pidfds would be counted.
func TestAwaitExitWatchesOnePidfd(t *testing.T) {
	for name, wait := range map[string]func(context.Context, waiter.Target) error{
		"WaitAll": func(ctx context.Context, tg waiter.Target) error {
			return waiter.WaitAll(ctx, []waiter.Target{tg}, waiter.Poll{}, nil)
		},
		"WaitEach": func(ctx context.Context, tg waiter.Target) error {
			in := make(chan waiter.Target, 1)
			in <- tg
			close(in)
			_, err := waiter.WaitEach(ctx, in, waiter.Poll{}, nil)
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.pid")
			h := hold(t, "drop:"+path)
			pid := h.cmd.Process.Pid
			ph, err := pidfile.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			h.stdin.Close() // the holder lets go of the lock and lives on
			testutil.PollUntil(t, "the lock released", func() bool {
				state, _, err := ph.Holder()
				return err == nil && state != pidfile.Running
			})
			before := pidfdCount(t)
			fd, err := unix.PidfdOpen(pid, 0)
			if err != nil {
				t.Skipf("no pidfd: %v", err)
			}
			tg := waiter.Target{Path: path, PID: pid, Handle: ph, Pidfd: os.NewFile(uintptr(fd), "pidfd"), AwaitExit: true}
			finish := mustBlock(t, func() error { return wait(t.Context(), tg) })
			h.cmd.Process.Kill() // a zombie until the cleanup reaps it
			if err := finish(); err != nil {
				t.Fatal(err)
			}
			if after := pidfdCount(t); after != before {
				t.Fatalf("%d pidfds open after the wait, %d before it was given one", after, before)
			}
		})
	}
}
