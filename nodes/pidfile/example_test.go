package pidfile_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/multi-launcher/multi/nodes/pidfile"
)

// A Go program that owns its pidfile for its lifetime: the lock dies with
// the process, SIGKILL included, so nobody mistakes a stale pidfile for a
// live node. A node started by "multi start --self-lock" calls
// pidfile.OwnFromEnv instead, which acquires the path multi hands it.
func ExampleAcquire() {
	dir, _ := os.MkdirTemp("", "pidfile-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run", "worker.pid")

	lock, err := pidfile.Acquire(path)
	if errors.Is(err, pidfile.ErrAlreadyRunning) {
		fmt.Println(err) // "already running (pid N)": another instance
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	info, _ := pidfile.Inspect(path)
	fmt.Println(info.State, info.PID == os.Getpid())

	lock.Release() // on a clean exit: remove the pidfile, drop the lock
	info, _ = pidfile.Inspect(path)
	fmt.Println(info.State)
	// Output:
	// running true
	// stopped
}
