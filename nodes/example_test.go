package nodes_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/multi-launcher/multi/nodes"
)

// A Go program that owns its pidfile for its lifetime: the lock dies with
// the process, SIGKILL included, so nobody mistakes a stale pidfile for a
// live node. A node started by "multi start --self-lock" calls
// nodes.OwnFromEnv instead, which acquires the path multi hands it.
func ExampleAcquire() {
	dir, _ := os.MkdirTemp("", "nodes-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run", "worker.pid")

	lock, err := nodes.Acquire(path)
	if errors.Is(err, nodes.ErrAlreadyRunning) {
		fmt.Println(err) // "already running (pid N)": another instance
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	info, _ := nodes.Inspect(path)
	fmt.Println(info.State, info.PID == os.Getpid())

	lock.Release() // on a clean exit: remove the pidfile, drop the lock
	info, _ = nodes.Inspect(path)
	fmt.Println(info.State)
	// Output:
	// running true
	// stopped
}

// Expand a set of celery-style names and templates without touching any
// file.
func ExampleSpec_Nodes() {
	ns, err := nodes.Spec{
		Names:   []string{"3"},
		Host:    "example.com",
		RunDir:  "/run/app",
		Command: []string{"app", "--port=80%i", "--name=%h"},
		Options: []nodes.Option{{Name: "-c", Value: "4", HasValue: true, Scope: "2-3"}},
	}.Nodes()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range ns {
		fmt.Println(n.FullName(), n.PidFile, nodes.Quote(n.Command))
	}
	// Output:
	// celery1@example.com /run/app/celery1.pid app --port=801 --name=celery1@example.com
	// celery2@example.com /run/app/celery2.pid app --port=802 --name=celery2@example.com -c 4
	// celery3@example.com /run/app/celery3.pid app --port=803 --name=celery3@example.com -c 4
}
