//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The driver is a child subreaper: every process it starts, and every
// process those leave behind (the nodes of multi, start-stop-daemon and
// celery multi, once the tool that started them exits), is reparented to it
// and reaped here at once. So no zombie is counted as alive by a pid-based
// peer (this machine's init reaps orphans only every couple of seconds), and
// the driver can find and kill everything it started, by pid.
//
// All children are reaped by one loop with wait4(-1). Nothing else in the
// driver may wait for a child: processes are started with [start] and
// waited for with [proc.wait], never with os/exec.

// exit is how a process the driver started ended.
type exit struct {
	status syscall.WaitStatus
	rusage syscall.Rusage
	end    time.Time
	mono   int64 // CLOCK_MONOTONIC (ns) of end, read right after wait4
	hwm    int64 // KiB, sampled; see maxRSSKiB
}

// maxRSSKiB is the peak resident set of the process, sampled from
// /proc/PID/status (VmHWM) while it ran. wait4's ru_maxrss is no use here:
// at exec the kernel folds the old address space's peak into it, and a
// child Go starts with vfork shares the driver's until then, so every
// child would show at least the driver's own RSS. Zero when the process
// was not sampled.
func (e exit) maxRSSKiB() int64 { return e.hwm }

// cpu is the user plus system time of the process and its reaped children.
func (e exit) cpu() time.Duration {
	return time.Duration(e.rusage.Utime.Nano() + e.rusage.Stime.Nano())
}

func (e exit) err() error {
	switch {
	case e.status.Exited() && e.status.ExitStatus() == 0:
		return nil
	case e.status.Exited():
		return fmt.Errorf("exit status %d", e.status.ExitStatus())
	case e.status.Signaled():
		return fmt.Errorf("killed by signal %d (%v)", int(e.status.Signal()), e.status.Signal())
	}
	return fmt.Errorf("wait status %#x", uint32(e.status))
}

var reap = struct {
	sync.Mutex
	waiting map[int]chan exit
	kick    chan struct{}
	orphans int
}{waiting: map[int]chan exit{}, kick: make(chan struct{}, 1)}

// becomeSubreaper makes this process the reaper of its orphaned
// descendants and starts the reaping loop.
func becomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", err)
	}
	go reapLoop()
	return nil
}

func reapLoop() {
	for {
		var ws syscall.WaitStatus
		var ru syscall.Rusage
		pid, err := syscall.Wait4(-1, &ws, 0, &ru)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.ECHILD {
			select {
			case <-reap.kick:
			case <-time.After(20 * time.Millisecond):
			}
			continue
		}
		if err != nil {
			time.Sleep(time.Millisecond)
			continue
		}
		e := exit{status: ws, rusage: ru, mono: mono(), end: time.Now()}
		// start holds the lock from fork until the pid is registered, so
		// a child that dies at once is still delivered.
		reap.Lock()
		ch := reap.waiting[pid]
		delete(reap.waiting, pid)
		if ch == nil {
			reap.orphans++
		}
		reap.Unlock()
		if ch != nil {
			ch <- e
		}
	}
}

// A proc is a process the driver started.
type proc struct {
	pid   int
	argv  []string
	begin time.Time
	done  chan exit
	out   *os.File // stdout and stderr, when captured

	hwm     atomic.Int64
	exited  chan struct{}
	sampled chan struct{}
}

type spawnOpts struct {
	env     []string // nil: the driver's environment
	dir     string
	capture bool // stdout and stderr to a temporary file, for output()
	stdout  *os.File
	// sample: read the process's VmHWM every millisecond while it runs,
	// for exit.maxRSSKiB.
	sample bool
}

var devNull *os.File

// start starts argv in its own process group. Its stdout and stderr go to
// /dev/null unless captured.
func start(argv []string, o spawnOpts) (*proc, error) {
	if devNull == nil {
		f, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			return nil, err
		}
		devNull = f
	}
	path := argv[0]
	if !strings.Contains(path, "/") {
		p, err := lookPath(path, o.env)
		if err != nil {
			return nil, err
		}
		path = p
	}
	p := &proc{argv: argv, done: make(chan exit, 1), exited: make(chan struct{})}
	out := devNull
	if o.stdout != nil {
		out = o.stdout
	}
	if o.capture {
		f, err := os.CreateTemp("", "bench-out-*")
		if err != nil {
			return nil, err
		}
		os.Remove(f.Name())
		p.out, out = f, f
	}
	env := o.env
	if env == nil {
		env = os.Environ()
	}
	attr := &os.ProcAttr{
		Dir:   o.dir,
		Env:   env,
		Files: []*os.File{devNull, out, out},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	}
	reap.Lock()
	p.begin = time.Now()
	osp, err := os.StartProcess(path, argv, attr)
	if err != nil {
		reap.Unlock()
		if p.out != nil {
			p.out.Close()
		}
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	p.pid = osp.Pid
	reap.waiting[p.pid] = p.done
	reap.Unlock()
	// The driver reaps by pid; drop the handle (and its pidfd) os keeps.
	osp.Release()
	select {
	case reap.kick <- struct{}{}:
	default:
	}
	if o.sample {
		p.sampled = make(chan struct{})
		go p.sampleHWM()
	}
	return p, nil
}

var selfComm = func() string {
	b, _ := os.ReadFile("/proc/self/comm")
	return strings.TrimSpace(string(b))
}()

// sampleHWM records the process's peak RSS until it exits. Samples taken
// before its exec (it still runs in the driver's address space, under the
// driver's name) are skipped.
func (p *proc) sampleHWM() {
	defer close(p.sampled)
	path := "/proc/" + strconv.Itoa(p.pid) + "/status"
	buf := make([]byte, 4096)
	for {
		select {
		case <-p.exited:
			return
		default:
		}
		if hwm, name, ok := readHWM(path, buf); ok && name != selfComm {
			if hwm > p.hwm.Load() {
				p.hwm.Store(hwm)
			}
		}
		time.Sleep(time.Millisecond)
	}
}

func readHWM(path string, buf []byte) (hwm int64, name string, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", false
	}
	n, _ := f.Read(buf)
	f.Close()
	for _, line := range strings.Split(string(buf[:n]), "\n") {
		if v, ok := strings.CutPrefix(line, "Name:"); ok {
			name = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			hwm, _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return hwm, name, hwm > 0
		}
	}
	return 0, name, false
}

// wait waits for the process to end.
func (p *proc) wait() exit {
	e := <-p.done
	if p.sampled != nil {
		close(p.exited)
		<-p.sampled
		e.hwm = p.hwm.Load()
	}
	return e
}

// output returns what a captured process printed.
func (p *proc) output() string {
	if p.out == nil {
		return ""
	}
	b := make([]byte, 1<<20)
	n, _ := p.out.ReadAt(b, 0)
	p.out.Close()
	p.out = nil
	return string(b[:n])
}

// run starts argv, waits for it, and returns its exit, its wall time and,
// with capture, its output.
func run(argv []string, o spawnOpts) (exit, time.Duration, string, error) {
	p, err := start(argv, o)
	if err != nil {
		return exit{}, 0, "", err
	}
	e := p.wait()
	out := p.output()
	if err := e.err(); err != nil {
		return e, e.end.Sub(p.begin), out, fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, failedLines(out, 5))
	}
	return e, e.end.Sub(p.begin), out, nil
}

// failedLines is the first n lines of s that say FAILED, or its last n
// lines if none does.
func failedLines(s string, n int) string {
	var failed []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "FAILED") && len(failed) < n {
			failed = append(failed, l)
		}
	}
	if len(failed) == 0 {
		return lastLines(s, n)
	}
	return strings.Join(failed, " | ")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

func lookPath(name string, env []string) (string, error) {
	pathVar := os.Getenv("PATH")
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	for _, d := range filepath.SplitList(pathVar) {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found in PATH %s", name, pathVar)
}
