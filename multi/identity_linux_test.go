package multi_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/pin"
	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/multi"
)

// TestHolderMismatchNotSignalled: w2's pidfile renamed over w1's (a user
// who can write the pidfiles' folder), w1's pidfile is locked by w2's
// process. Every verb aimed at w1 fails with ErrHolderMismatch, naming
// both pids, and signals nothing: the sleeps (which any of these signals
// would end) both live on. The SIGKILL round's fallback, which opens the
// pidfile again, checks the same.
func TestHolderMismatchNotSignalled(t *testing.T) {
	c := cluster(t, "", "w1", "w2")
	c.Detach = true
	ctx := context.Background()
	if _, err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	p1, p2 := holderOf(t, c.Nodes[0]), holderOf(t, c.Nodes[1])
	alive := pinProcesses(t, p1, p2)
	if err := os.Rename(c.Nodes[1].PidFile, c.Nodes[0].PidFile); err != nil {
		t.Fatal(err)
	}
	w1, err := c.Only("w1")
	if err != nil {
		t.Fatal(err)
	}
	verbs := []struct {
		name string
		verb func(context.Context) ([]multi.Result, error)
	}{
		{"Stop", func(ctx context.Context) ([]multi.Result, error) { return w1.Stop(ctx, multi.StopOptions{}) }},
		{"StopWait", func(ctx context.Context) ([]multi.Result, error) { return w1.StopWait(ctx, multi.StopOptions{}) }},
		{"Kill", func(ctx context.Context) ([]multi.Result, error) { return w1.Kill(ctx, multi.StopOptions{}) }},
		{"Restart", func(ctx context.Context) ([]multi.Result, error) { return w1.Restart(ctx, multi.RestartOptions{}) }},
		{"Send", func(ctx context.Context) ([]multi.Result, error) {
			return w1.Send(ctx, syscall.SIGHUP, multi.StopOptions{})
		}},
	}
	for _, v := range verbs {
		res, err := v.verb(ctx)
		if !errors.Is(err, multi.ErrHolderMismatch) {
			t.Errorf("%s: %v; want ErrHolderMismatch", v.name, err)
			continue
		}
		var he *pin.HolderError
		if !errors.As(err, &he) || he.Node != "w1" || he.PidFile != c.Nodes[0].PidFile || he.PID != p2 || he.Recorded.PID != p1 {
			t.Errorf("%s: %#v; want w1, its pidfile, holder %d, recorded %d", v.name, he, p2, p1)
		}
		msg := res[0].String()
		for _, want := range []string{"w1", c.Nodes[0].PidFile, "pid " + strconv.Itoa(p2), "pid " + strconv.Itoa(p1), "not signalled"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q does not name %q", v.name, msg, want)
			}
		}
		if res[0].Outcome != multi.Failed {
			t.Errorf("%s: outcome %v; want Failed", v.name, res[0].Outcome)
		}
	}
	_, want, err := record.ReadStarted(c.RunDir, "w1")
	if err != nil || want.PID != p1 {
		t.Fatalf("w1's record: %+v, %v; want pid %d", want, err, p1)
	}
	if err := multi.KillHeldRecorded(nil, nil, c.Nodes[0].PidFile, p2, want, syscall.SIGKILL, false); !errors.Is(err, multi.ErrHolderMismatch) {
		t.Errorf("KillHeld with no handle: %v; want ErrHolderMismatch", err)
	}
	checkAlive(t, alive)
	// Status says so: not running as w1, the holder another's.
	sts, _ := c.Status(ctx)
	if sts[0].State != multi.StateMismatch || !errors.Is(sts[0].Err, multi.ErrHolderMismatch) || sts[0].PID != p2 {
		t.Errorf("status of w1: %+v; want mismatch, held by pid %d", sts[0], p2)
	}
	// --lost reaches w1's own process, through its record, and leaves the
	// pidfile that is not its own to its holder.
	res, err := w1.Kill(ctx, multi.StopOptions{Lost: true})
	if err != nil || res[0].Outcome != multi.Killed || !res[0].Lost || res[0].PID != p1 || res[0].HeldBy != p2 {
		t.Errorf("kill --lost of w1: %+v, %v; want pid %d killed, lost, its pidfile left to pid %d", res[0], err, p1, p2)
	}
	delete(alive, p1)
	checkAlive(t, alive)
}

// pinProcesses opens a pidfd of each pid (skipping the test where there
// are none), killed through it when the test ends: pid -> pidfd.
func pinProcesses(t *testing.T, pids ...int) map[int]int {
	t.Helper()
	alive := map[int]int{}
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			t.Skipf("no pidfds: %v", err)
		}
		alive[pid] = fd
		t.Cleanup(func() {
			unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
			unix.Close(fd)
		})
	}
	return alive
}

// checkAlive fails the test for each process pinned by pinProcesses that
// has exited: a pidfd is readable once its process has (a zombie has).
func checkAlive(t *testing.T, alive map[int]int) {
	t.Helper()
	for pid, fd := range alive {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, err := unix.Poll(fds, 0); err != nil || n != 0 {
			t.Errorf("pid %d exited (%v); want it alive, never signalled", pid, err)
		}
	}
}
