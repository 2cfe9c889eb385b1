//go:build unix

package integration

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// fakeNode is the small Go node program the scripts start, by the name
// fakenode. It installs its signal handling first and only then writes its
// -pid and -ready files, so a script that waits for them cannot signal it
// too early. On SIGTERM it prints "terminated by SIGTERM" and exits 0,
// unless -ignore-term or -siglog. It exits by itself after -max, so that
// even a broken test cannot leave it running for long.
//
//   - -siglog FILE: catch every catchable signal (HUP INT QUIT USR1 USR2
//     TERM ALRM), append its name to FILE and keep running (but after INT,
//     which is how testscript ends background commands): a process that
//     must never be signalled, or a node that shows when it got TERM.
//   - -pid FILE: write the process's pid to FILE.
//   - -count FILE: append the pid to FILE at start, to count instances.
//   - -fork FILE: start a child fakenode (with the same -ignore-term and
//     -max) in the same process group, and write the child's pid to FILE
//     once the child handles signals, before -ready.
//   - -lock FILE: hold a lock on FILE that is not a node's (-lock-kind
//     read: a POSIX read lock; ofd: an OFD write lock; range: a POSIX
//     write lock on byte 0 only), taken before -ready.
//   - -close-lock-on FILE: once FILE exists, close the inherited pidfile
//     descriptor ($MULTI_PIDFILE_FD), which drops the pidfile's lock, and
//     write FILE.closed.
func fakeNode() {
	fs := flag.NewFlagSet("fakenode", flag.ExitOnError)
	ready := fs.String("ready", "", "write this file once signals are handled")
	ignoreTerm := fs.Bool("ignore-term", false, "ignore SIGTERM")
	argsOut := fs.String("args", "", "write the remaining arguments as JSON to this file")
	exitNow := fs.Int("exit", -1, "exit at once with this status")
	max := fs.Duration("max", 2*time.Minute, "exit after this long")
	siglog := fs.String("siglog", "", "log every catchable signal to this file and keep running")
	pidOut := fs.String("pid", "", "write the pid to this file")
	count := fs.String("count", "", "append the pid to this file at start")
	fork := fs.String("fork", "", "start a child fakenode and write its pid to this file")
	closeLockOn := fs.String("close-lock-on", "", "close the inherited pidfile descriptor once this file exists")
	lockOn := fs.String("lock", "", "hold a lock that is not a node's on this file")
	lockKind := fs.String("lock-kind", "read", "the -lock: read, ofd or range")
	listen := fs.String("listen", "", "listen on this TCP address after -listen-after (a readiness check's server)")
	listenAfter := fs.Duration("listen-after", 0, "with -listen: how long to wait first")
	fs.Parse(os.Args[1:])

	if *count != "" {
		f, err := os.OpenFile(*count, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err == nil {
			fmt.Fprintln(f, os.Getpid())
			f.Close()
		}
	}
	if *exitNow >= 0 {
		fmt.Println("fakenode: exiting with", *exitNow)
		os.Exit(*exitNow)
	}
	if *closeLockOn != "" {
		fd, err := strconv.Atoi(os.Getenv("MULTI_PIDFILE_FD"))
		if err != nil || fd < 3 {
			fmt.Fprintln(os.Stderr, "fakenode: no $MULTI_PIDFILE_FD")
			os.Exit(1)
		}
		go func() {
			// Polled no longer than the node lives (-max).
			deadline := time.Now().Add(*max)
			for {
				if _, err := os.Stat(*closeLockOn); err == nil {
					break
				}
				if time.Now().After(deadline) {
					return
				}
				time.Sleep(time.Millisecond)
			}
			syscall.Close(fd)
			fmt.Println("fakenode: closed the pidfile descriptor", fd)
			writeFile(*closeLockOn+".closed", "closed\n")
		}()
	}
	if *argsOut != "" {
		b, _ := json.Marshal(fs.Args())
		if err := os.WriteFile(*argsOut, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	sigs := make(chan os.Signal, 1)
	logged := make(chan os.Signal, 16)
	switch {
	case *siglog != "":
		signal.Notify(logged, syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGUSR1,
			syscall.SIGUSR2, syscall.SIGTERM, syscall.SIGALRM)
	case *ignoreTerm:
		signal.Ignore(syscall.SIGTERM)
	default:
		signal.Notify(sigs, syscall.SIGTERM)
	}
	fmt.Printf("fakenode: running as pid %d\n", os.Getpid())
	if *lockOn != "" {
		if err := takeLock(*lockOn, *lockKind); err != nil {
			fmt.Fprintln(os.Stderr, "fakenode: lock:", err)
			os.Exit(1)
		}
	}
	if *fork != "" {
		startChild(*fork, *ignoreTerm, *max)
	}
	if *pidOut != "" {
		writeFile(*pidOut, strconv.Itoa(os.Getpid())+"\n")
	}
	if *ready != "" {
		writeFile(*ready, "ready\n")
	}
	if *listen != "" {
		go listenLater(*listen, *listenAfter)
	}
	deadline := time.After(*max)
	for {
		select {
		case s := <-logged:
			// Replaced whole, so that a script that sees the file sees
			// the line.
			old, _ := os.ReadFile(*siglog)
			writeFile(*siglog, string(old)+s.(syscall.Signal).String()+"\n")
			fmt.Println("fakenode: got", s)
			if s == syscall.SIGINT {
				// How testscript ends a background command.
				os.Exit(2)
			}
		case <-sigs:
			fmt.Println("fakenode: terminated by SIGTERM")
			os.Exit(0)
		case <-deadline:
			fmt.Println("fakenode: -max reached")
			os.Exit(3)
		}
	}
}

// startChild starts a child fakenode in this process's group and returns
// once the child has written its pid to pidfile, that is once its signal
// handling is in place.
func startChild(pidfile string, ignoreTerm bool, max time.Duration) {
	args := []string{"-pid", pidfile, "-max", max.String()}
	if ignoreTerm {
		args = append(args, "-ignore-term")
	}
	cmd := exec.Command("fakenode", args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "fakenode: fork:", err)
		os.Exit(1)
	}
	go cmd.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(pidfile); err == nil {
			return
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "fakenode: fork: the child (pid %d) did not write %s in 30s\n", cmd.Process.Pid, pidfile)
			cmd.Process.Kill()
			os.Exit(1)
		}
		time.Sleep(time.Millisecond)
	}
}

// writeFile writes a file atomically, so that a script waiting for it
// never reads it half written.
func writeFile(path, text string) {
	tmp := path + ".tmp"
	err := os.WriteFile(tmp, []byte(text), 0o644)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
