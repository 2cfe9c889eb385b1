// Command selfnode is a Go node that owns its pidfile, as a program run by
// "multi start --self-lock" does: it takes the lock on $MULTI_PIDFILE with
// pidfile.OwnFromEnv, and removes the pidfile when it exits cleanly on
// SIGTERM. With -no-lock it never takes the lock, to test start's timeout.
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
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if !*noLock {
		lock, err := pidfile.OwnFromEnv()
		if err != nil {
			fmt.Fprintln(os.Stderr, "selfnode:", err)
			os.Exit(1)
		}
		defer lock.Release()
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
	case <-time.After(*max):
		fmt.Println("selfnode: -max reached")
	}
}
