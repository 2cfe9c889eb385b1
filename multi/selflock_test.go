//go:build unix

package multi_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/multi"
)

// A self-locking node that never locks is given up when Start's context
// ends, not at the lock timeout: the error is the context's, and the
// result names the pid that was killed.
func TestStartSelfLockHonoursContext(t *testing.T) {
	c := cluster(t, "", "w1")
	c.Nodes[0].SelfLock = true
	c.LockTimeout = 5 * time.Second // longer than the context
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := c.Start(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Start: %v; want the context's error", err)
	}
	if errors.Is(err, multi.ErrNoLock) {
		t.Fatalf("Start: %v; want no lock timeout", err)
	}
	pid := res[0].PID
	if pid <= 1 {
		t.Fatalf("Result.PID = %d; want the pid killed", pid)
	}
	// Killed and reaped by Start: the pid names no process (a recycled
	// pid this soon is not expected).
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("pid %d after Start: kill 0 = %v; want ESRCH", pid, err)
	}
}
