// Command selfnode is a Go node that owns its pidfile, as a program run by
// "multi start --self-lock" does: it takes the lock on $MULTI_PIDFILE with
// pidfile.OwnFromEnv, and removes the pidfile when it exits cleanly on
// SIGTERM. With -no-lock it never takes the lock, to test start's timeout.
// With -linger it releases its lock on SIGTERM and lives on that long
// before it exits, as a program with more to do after its lock does.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

func main() {
	ready := flag.String("ready", "", "write this file once the lock is held and signals are handled")
	noLock := flag.Bool("no-lock", false, "never take the lock")
	max := flag.Duration("max", 2*time.Minute, "exit after this long")
	linger := flag.Duration("linger", 0, "on SIGTERM, release the lock, then live this long")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	var lock *pidfile.Lock
	if !*noLock {
		var err error
		lock, err = pidfile.OwnFromEnv()
		if err != nil {
			fmt.Fprintln(os.Stderr, "selfnode:", err)
			os.Exit(1)
		}
		defer func() {
			if lock != nil {
				lock.Release()
			}
		}()
	}
	fmt.Printf("selfnode: %s running as pid %d\n", os.Getenv(nodes.EnvNode), os.Getpid())
	if *ready != "" {
		if err := os.WriteFile(*ready, []byte("ready\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "selfnode:", err)
			os.Exit(1)
		}
	}
	select {
	case <-ctx.Done():
		fmt.Println("selfnode: terminated")
		if *linger > 0 && lock != nil {
			lock.Release()
			lock = nil // released once: the pidfile may be the next node's
			fmt.Println("selfnode: released its lock; lingering")
			time.Sleep(*linger)
		}
	case <-time.After(*max):
		fmt.Println("selfnode: -max reached")
	}
}
