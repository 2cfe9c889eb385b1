//go:build unix

package logwriter

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/safefs"
)

// Env marks this program started as a node's log writer, with the
// arguments LOGFILE NODE PID STARTTICKS MAXSIZE KEEP; its standard
// input is the read end of the node's output pipe and, where the
// system has pidfds, descriptor [PidfdFD] is one of the node's process.
const Env = "_MULTI_LOG_WRITER_V1"

// PidfdFD is the log writer's descriptor of the node's process.
const PidfdFD = 3

// batchWait is the longest the writer lets the node's output gather in
// the pipe after a read: a node that writes line by line then writes
// into a pipe nobody waits on, which costs it no wakeup of the writer
// per line. The wait is shorter where the pipe would fill sooner at the
// rate the node writes, and none where that is under minWait.
const (
	batchWait = 5 * time.Millisecond
	minWait   = 100 * time.Microsecond
)

// Main is the log writer's process: it copies its standard input to
// the logfile under its size ([Rotator]), between a marker line where
// the node started and one where it ended, with how. It
// outlives the node only as long as the node's output is open and its
// exit status takes to read. It never returns.
func Main(args []string) {
	// Stops are the node's, Ctrl-C its terminal's: the writer ends with
	// the output it copies, not before.
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE)
	os.Unsetenv(Env)
	safefs.AcceptSharedFromEnv()
	if len(args) != 6 {
		os.Exit(2)
	}
	path, node := args[0], args[1]
	pid, _ := strconv.Atoi(args[2])
	ticks, _ := strconv.ParseUint(args[3], 10, 64)
	maxSize, err1 := strconv.ParseInt(args[4], 10, 64)
	keep, err2 := strconv.Atoi(args[5])
	if err1 != nil || err2 != nil {
		os.Exit(2)
	}
	// The pidfd, if the start passed one, before any file of the
	// writer's own can take its number.
	pidfd := -1
	if _, err := unix.FcntlInt(PidfdFD, unix.F_GETFD, 0); err == nil {
		pidfd = PidfdFD
	}
	var out io.Writer = io.Discard
	r, err := Open(path, maxSize, keep)
	if err == nil {
		out = r
	}
	// The node's output is drained whatever becomes of the file, so
	// that its writes never fail or block for want of a reader.
	writeMarker(out, fmt.Sprintf("started (pid %d)", pid), node)
	copyOut(out, 0)
	writeMarker(out, ended(pidfd, pid, ticks), node)
	if r != nil {
		r.Close()
	}
	os.Exit(0)
}

// writeMarker writes a marker line: "multi: NODE WHAT at TIME".
func writeMarker(w io.Writer, what, node string) {
	fmt.Fprintf(w, "multi: %s %s at %s\n", node, what, time.Now().UTC().Format(StampLayout))
}

// copyOut copies the pipe at fd to w until it ends, with plain
// blocking reads (a reader the pipe wakes only when it waits, never a
// poller the pipe wakes at every write). Write errors are ignored: the
// output is drained all the same.
func copyOut(w io.Writer, fd int) {
	half := pipeSize(fd) / 2
	buf := make([]byte, min(max(2*half, 64<<10), 1<<20))
	last := time.Now()
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EAGAIN {
			unix.SetNonblock(fd, false) // a pipe's O_NONBLOCK is its writer's to set too
			continue
		}
		if err == unix.EINTR {
			continue
		}
		if n <= 0 {
			return
		}
		took := time.Since(last) // n bytes came in that long
		w.Write(buf[:n])
		if n < half {
			// Half a pipe, at this rate, comes in half*took/n: wait
			// half that, for the pipe never to fill.
			d := min(batchWait, time.Duration(float64(took)*float64(half)/float64(n)/2))
			if d >= minWait {
				time.Sleep(d)
			}
		}
		last = time.Now()
	}
}

// describe says how a process ended from its wait status.
func describe(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		s := "killed by " + unix.SignalName(ws.Signal())
		if ws.CoreDump() {
			s += " (core dumped)"
		}
		return s
	}
	return "exit status " + strconv.Itoa(ws.ExitStatus())
}
