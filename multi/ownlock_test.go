//go:build unix

package multi_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/multi-launcher/multi/internal/launch"
	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// A process that holds its node's lock (pidfile.Acquire, or a self-locking
// Go node through OwnFromEnv) and drives a Cluster on that node: each verb
// that would signal it fails with ErrOwnNode, sends nothing, and the lock
// stays this process's, as another process sees.
func TestVerbsOnOwnNode(t *testing.T) {
	c := cluster(t, "", "w1")
	o := multi.StopOptions{Timeout: launch.DefaultLockTimeout}
	n := c.Nodes[0]
	l, err := pidfile.Acquire(n.PidFile)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	me := os.Getpid()
	// A SIGUSR1 that reached this process would end the test binary.
	verbs := []struct {
		name string
		f    func(context.Context) ([]multi.Result, error)
	}{
		{"Stop", bind(o, c.Stop)},
		{"StopWait", bind(o, c.StopWait)},
		{"Kill", bind(o, c.Kill)},
		{"Send", func(ctx context.Context) ([]multi.Result, error) { return c.Send(ctx, syscall.SIGUSR1, o) }},
		{"Restart", func(ctx context.Context) ([]multi.Result, error) {
			return c.Restart(ctx, multi.RestartOptions{Stop: o})
		}},
	}
	want := fmt.Sprintf("running %d <nil>", me)
	for _, v := range verbs {
		res, err := v.f(t.Context())
		if !errors.Is(err, multi.ErrOwnNode) || res[0].PID != me || res[0].Outcome != multi.Failed {
			t.Errorf("%s: %v, %+v; want ErrOwnNode naming pid %d", v.name, err, res[0], me)
		}
		if got := testutil.SeenFromChild(t, n.PidFile); got != want {
			t.Fatalf("after %s, another process sees %q; want %q: the lock was dropped", v.name, got, want)
		}
	}
}
