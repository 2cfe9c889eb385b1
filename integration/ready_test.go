package integration

import (
	"fmt"
	"net"
	"os"
	"time"
)

// celeryPython is the python3 a [celery] script runs celery with.
const celeryPython = "/usr/bin/python3"

// listenLater is fakenode's -listen: a TCP server that starts listening
// after a delay, as an application does once it has loaded; it says so
// on its output (the node's log).
func listenLater(addr string, after time.Duration) {
	time.Sleep(after) // the application's start-up, not a test's wait
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakenode: listen:", err)
		os.Exit(1)
	}
	fmt.Println("fakenode: listening on", addr)
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}
