//go:build linux

package integration

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/multi-launcher/multi/nodes/pidfile"
	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// canSubreaper reports whether a process here can become a child
// subreaper: qemu-user (make test-arm64) answers EINVAL to the prctl, as
// it does to multi run's, which then runs without.
func canSubreaper() bool {
	var v int32
	return unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&v)), 0, 0, 0) == nil
}

// An nsRun is a `multi run` started by nsrun as pid 1 of a pid namespace
// of its own: a container's stand-in.
type nsRun struct {
	cmd  *exec.Cmd
	pid  int // the namespace's pid 1 (multi run), as seen here
	done chan struct{}
}

var (
	nsRunsMu sync.Mutex
	nsRuns   = map[string]*nsRun{} // by $WORK and name
)

// nsrun NAME ARGS... starts `multi run ARGS...` as pid 1 of a new pid
// namespace (unshare --pid --fork --mount-proc --kill-child); its stdout
// and stderr go to $WORK/NAME.out and $WORK/NAME.err; $NAME is set to its
// pid as seen here. $NOTIFY_SOCKET is passed on when set. Whatever is
// left of the namespace is killed when the script ends (SIGKILL to its pid
// 1, which takes the whole namespace with it).
func cmdNsRun(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: nsrun NAME ARGS...")
	}
	name := args[0]
	cmd := scriptCmd(ts, "unshare", append([]string{"--pid", "--fork", "--mount-proc", "--kill-child", "--", "multi", "run"}, args[1:]...)...)
	if s := ts.Getenv("NOTIFY_SOCKET"); s != "" {
		cmd.Env = append(cmd.Env, "NOTIFY_SOCKET="+s)
	}
	out, err := os.Create(ts.MkAbs(name + ".out"))
	ts.Check(err)
	defer out.Close()
	errf, err := os.Create(ts.MkAbs(name + ".err"))
	ts.Check(err)
	defer errf.Close()
	cmd.Stdout, cmd.Stderr = out, errf
	ts.Check(cmd.Start())
	r := &nsRun{cmd: cmd, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(r.done)
	}()
	key := ts.MkAbs(".") + "\x00" + name
	nsRunsMu.Lock()
	nsRuns[key] = r
	nsRunsMu.Unlock()
	ts.Defer(func() {
		select {
		case <-r.done:
		default:
			if r.pid > 1 {
				syscall.Kill(r.pid, syscall.SIGKILL)
			}
			cmd.Process.Kill()
			<-r.done
		}
		nsRunsMu.Lock()
		delete(nsRuns, key)
		nsRunsMu.Unlock()
	})
	// unshare's one child is the namespace's pid 1; wait until it runs
	// multi.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if pid := onlyChild(cmd.Process.Pid); pid > 1 {
			if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); strings.TrimSpace(string(comm)) == "multi" {
				r.pid = pid
				break
			}
		}
		select {
		case <-r.done:
			ts.Fatalf("nsrun %s: unshare exited: %v", name, cmd.ProcessState)
		default:
		}
		if time.Now().After(deadline) {
			ts.Fatalf("nsrun %s: no multi in the new namespace", name)
		}
		time.Sleep(5 * time.Millisecond)
	}
	ts.Setenv(name, strconv.Itoa(r.pid))
}

// onlyChild is the first child of pid, 0 if none.
func onlyChild(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(f[0])
	return n
}

// nswait NAME CODE waits for the run started by nsrun NAME to exit, and
// checks that it exited with CODE (unshare passes its child's on); CODE
// "any" checks nothing (a run SIGKILLed: unshare's own status is
// unshare's business).
func cmdNsWait(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: nswait NAME CODE")
	}
	want, err := strconv.Atoi(args[1])
	if args[1] == "any" {
		want, err = -1000, nil
	}
	ts.Check(err)
	nsRunsMu.Lock()
	r := nsRuns[ts.MkAbs(".")+"\x00"+args[0]]
	nsRunsMu.Unlock()
	if r == nil {
		ts.Fatalf("nswait: no nsrun %s", args[0])
	}
	select {
	case <-r.done:
	case <-time.After(60 * time.Second):
		ts.Fatalf("nswait: %s still runs", args[0])
	}
	if got := r.cmd.ProcessState.ExitCode(); got != want && want != -1000 {
		errs, _ := os.ReadFile(ts.MkAbs(args[0] + ".err"))
		ts.Fatalf("%s exited with %v; want %d\n%s", args[0], r.cmd.ProcessState, want, errs)
	}
}

// held PIDFILE waits until some process holds PIDFILE's lock (it may be in
// another pid namespace) and sets $PID to the holder as seen here (0 when
// it cannot be named). With !, it waits until nobody holds it.
func cmdHeld(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: held PIDFILE")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := pidfile.Inspect(ts.MkAbs(args[0]))
		ts.Check(err)
		held := info.State == pidfile.Running || info.State == pidfile.Elsewhere
		if held != neg {
			ts.Setenv("PID", strconv.Itoa(info.PID))
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s: %s (pid %d)", args[0], info.State, info.PID)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// orphan PARENT COMM VAR waits until a process named COMM is a child of
// PARENT (the run, to which it was orphaned) and sets $VAR to its pid.
func cmdOrphan(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: orphan PARENT COMM VAR")
	}
	parent, err := strconv.Atoi(args[0])
	ts.Check(err)
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, c := range childrenOf(parent) {
			if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", c)); strings.TrimSpace(string(comm)) == args[1] {
				ts.Setenv(args[2], strconv.Itoa(c))
				return
			}
		}
		if time.Now().After(deadline) {
			ts.Fatalf("no %s among the children of %d", args[1], parent)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func childrenOf(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// reaped PID waits until the process is gone for good: not running and
// not a zombie either (its parent has reaped it).
func cmdReaped(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: reaped PID")
	}
	pid, err := strconv.Atoi(args[0])
	ts.Check(err)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("pid %d: state %q; want it reaped", pid, procState(pid))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// notifysock PATH listens on a unix datagram socket at PATH, as systemd's
// $NOTIFY_SOCKET, and appends every datagram to PATH.log, a line each,
// until the script ends. A PATH starting with '@' is an abstract socket
// (Linux); its log is then $WORK/abstract.sock.log.
func cmdNotifySock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: notifysock PATH")
	}
	addr, path := ts.MkAbs(args[0]), ts.MkAbs(args[0])
	if strings.HasPrefix(args[0], "@") {
		addr, path = args[0], ts.MkAbs("abstract.sock")
	}
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: addr, Net: "unixgram"})
	ts.Check(err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		var log []byte
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			log = append(log, bytes.TrimSpace(buf[:n])...)
			log = append(log, '\n')
			// Replaced whole: a reader never sees half a line.
			os.WriteFile(path+".log.tmp", log, 0o644)
			os.Rename(path+".log.tmp", path+".log")
		}
	}()
	ts.Defer(func() {
		conn.Close()
		<-done
	})
}

// lockwaiter PIDFILE waits until a process is blocked waiting for
// PIDFILE's lock (a "->" line for its inode in /proc/locks): a standby's
// exec step asleep in F_SETLKW, not polling.
func cmdLockWaiter(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: lockwaiter PIDFILE")
	}
	st, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	ino := fmt.Sprintf(":%d ", st.Sys().(*syscall.Stat_t).Ino)
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile("/proc/locks")
		ts.Check(err)
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "->") && strings.Contains(l, ino) {
				return
			}
		}
		if time.Now().After(deadline) {
			ts.Fatalf("nobody waits for the lock of %s:\n%s", args[0], b)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
