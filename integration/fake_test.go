package integration

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// fakeNode is the small Go node program the scripts start, by the name
// fakenode. It installs its signal handling first and only then writes its
// -ready file, so a script that waits for that file cannot signal it too
// early. On SIGTERM it prints "terminated by SIGTERM" and exits 0, unless
// -ignore-term. It exits by itself after -max, so that even a broken test
// cannot leave it running for long.
func fakeNode() {
	fs := flag.NewFlagSet("fakenode", flag.ExitOnError)
	ready := fs.String("ready", "", "write this file once signals are handled")
	ignoreTerm := fs.Bool("ignore-term", false, "ignore SIGTERM")
	argsOut := fs.String("args", "", "write the remaining arguments as JSON to this file")
	exitNow := fs.Int("exit", -1, "exit at once with this status")
	max := fs.Duration("max", 2*time.Minute, "exit after this long")
	fs.Parse(os.Args[1:])

	if *exitNow >= 0 {
		fmt.Println("fakenode: exiting with", *exitNow)
		os.Exit(*exitNow)
	}
	if *argsOut != "" {
		b, _ := json.Marshal(fs.Args())
		if err := os.WriteFile(*argsOut, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	sigs := make(chan os.Signal, 1)
	if *ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	} else {
		signal.Notify(sigs, syscall.SIGTERM)
	}
	fmt.Printf("fakenode: running as pid %d\n", os.Getpid())
	if *ready != "" {
		if err := os.WriteFile(*ready, []byte("ready\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	select {
	case <-sigs:
		fmt.Println("fakenode: terminated by SIGTERM")
		os.Exit(0)
	case <-time.After(*max):
		fmt.Println("fakenode: -max reached")
		os.Exit(3)
	}
}
