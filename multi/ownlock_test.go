//go:build unix

package multi_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// inspectEnv makes the test binary, at init, print what pidfile.Inspect
// says of the pidfile it names ("running PID") and exit: another
// process's view of a lock, which F_GETLK never gives its holder.
const inspectEnv = "MULTI_TEST_INSPECT"

func init() {
	if path := os.Getenv(inspectEnv); path != "" {
		info, err := pidfile.Inspect(path)
		fmt.Printf("%s %d %v\n", info.State, info.PID, err)
		os.Exit(0)
	}
}

// seenFromChild returns what another process sees of path's lock.
func seenFromChild(t *testing.T, path string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), inspectEnv+"="+path, "GORACE=atexit_sleep_ms=0") // the race runtime sleeps a second at exit by default
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("inspecting from a child: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// A process that holds its node's lock (pidfile.Acquire, or a self-locking
// Go node through OwnFromEnv) and drives a Cluster on that node: each verb
// that would signal it fails with ErrOwnNode, sends nothing, and the lock
// stays this process's, as another process sees.
func TestVerbsOnOwnNode(t *testing.T) {
	c := cluster(t, "", "w1")
	c.Timeout = multi.DefaultLockTimeout
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
		{"Stop", c.Stop},
		{"StopWait", c.StopWait},
		{"Kill", c.Kill},
		{"Send", func(ctx context.Context) ([]multi.Result, error) { return c.Send(ctx, syscall.SIGUSR1) }},
		{"Restart", c.Restart},
	}
	want := fmt.Sprintf("running %d <nil>", me)
	for _, v := range verbs {
		res, err := v.f(t.Context())
		if !errors.Is(err, multi.ErrOwnNode) || res[0].PID != me || res[0].Outcome != multi.Failed {
			t.Errorf("%s: %v, %+v; want ErrOwnNode naming pid %d", v.name, err, res[0], me)
		}
		if got := seenFromChild(t, n.PidFile); got != want {
			t.Fatalf("after %s, another process sees %q; want %q: the lock was dropped", v.name, got, want)
		}
	}
}
