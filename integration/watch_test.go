//go:build unix

package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/multi"
)

// status --watch --json, in the background while 20 nodes start and then
// stop: every node is seen running, with the pid its start said, and then
// stopped, in that order, each line a JSON object with its time and the
// node's Status; Ctrl-C (SIGINT) ends it with 130, as any verb.
func TestStatusWatchJSON(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	work := t.TempDir()
	rundir := filepath.Join(work, "run")
	killNodes(t, rundir)
	env := append(os.Environ(), "MULTI_RUNDIR="+rundir)
	multiCmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.Dir = env, work
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("multi %q: %v\n%s", args, err, out)
		}
		return string(out)
	}

	w := startWatch(t, bin, env, work, "status", "--watch", "--json", "20")
	names := make([]string, 20)
	for i := range names {
		names[i] = "celery" + strconv.Itoa(i+1)
	}
	// seen returns, for each node, the states of its lines in order.
	seen := func() map[string][]watchLine {
		out := map[string][]watchLine{}
		for _, l := range w.lines() {
			out[l.Status.Node.Name] = append(out[l.Status.Node.Name], l)
		}
		return out
	}
	// Every node once, at the first look: neither record nor pidfile.
	w.await(t, "every node's first line", func() bool { return len(seen()) == 20 })
	for _, n := range names {
		if ls := seen()[n]; len(ls) != 1 || ls[0].Status.State != multi.StateUnknown {
			t.Fatalf("%s's first lines: %+v; want one, unknown", n, ls)
		}
	}

	started := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^(celery\d+): started \(pid (\d+)\)$`).FindAllStringSubmatch(multiCmd("start", "20", "--", "sleep", "300"), -1) {
		started[m[1]], _ = strconv.Atoi(m[2])
	}
	if len(started) != 20 {
		t.Fatalf("started %d nodes: %v", len(started), started)
	}
	has := func(ls []watchLine, state multi.State) int {
		for i, l := range ls {
			if l.Status.State == state {
				return i
			}
		}
		return -1
	}
	w.await(t, "every node running", func() bool {
		s := seen()
		for _, n := range names {
			if has(s[n], multi.StateRunning) < 0 {
				return false
			}
		}
		return true
	})
	multiCmd("stopwait", "20")
	w.await(t, "every node stopped", func() bool {
		s := seen()
		for _, n := range names {
			if has(s[n], multi.StateStopped) < 0 {
				return false
			}
		}
		return true
	})
	if err := w.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code := w.wait(t)
	if code != 130 {
		t.Errorf("status --watch after SIGINT: exit %d; want 130", code)
	}
	if w.stderr.Len() > 0 {
		t.Errorf("stderr: %s", w.stderr.String())
	}

	s := seen()
	var last time.Time
	for _, l := range w.lines() {
		if l.at.Before(last) {
			t.Errorf("%s at %s, after a line at %s", l.Status.Node.Name, l.at, last)
		}
		last = l.at
	}
	for _, n := range names {
		ls := s[n]
		// A start records the node before its lock is taken: a look in
		// between (under an emulator, a long one) sees it stopped first.
		run, stop := has(ls, multi.StateRunning), -1
		for i, l := range ls {
			if l.Status.State == multi.StateStopped && i > run {
				stop = i
			}
		}
		if run < 0 || stop < run {
			t.Errorf("%s: %v; want running, then stopped", n, states(ls))
			continue
		}
		if ls[run].Status.PID != started[n] || ls[run].Status.Node.PidFile != filepath.Join(rundir, n+".pid") {
			t.Errorf("%s running: pid %d, pidfile %s; want pid %d, as start said", n, ls[run].Status.PID, ls[run].Status.Node.PidFile, started[n])
		}
		for i := 1; i < len(ls); i++ {
			if ls[i].Status.State == ls[i-1].Status.State && ls[i].Status.PID == ls[i-1].Status.PID && ls[i].Status.Tree.Procs == ls[i-1].Status.Tree.Procs {
				t.Errorf("%s: line %d says what line %d did: %v", n, i, i-1, states(ls))
			}
		}
	}
}

// states are the states of ls, in order.
func states(ls []watchLine) []multi.State {
	out := make([]multi.State, len(ls))
	for i, l := range ls {
		out[i] = l.Status.State
	}
	return out
}

// A watchLine is a line of status --watch --json.
type watchLine struct {
	Time   string       `json:"time"`
	Status multi.Status `json:"status"`
	at     time.Time
}

// A watcher is multi status --watch running in the background, its lines
// read as they come.
type watcher struct {
	cmd     *exec.Cmd
	stderr  bytes.Buffer
	mu      sync.Mutex
	parsed  []watchLine
	bad     error
	changed chan struct{} // a value after each line, or at the end
	done    chan struct{} // closed once stdout is read to its end
	waited  bool          // its exit status collected
}

// startWatch starts multi with args (status --watch --json ...) in a
// process group of its own, killed at the test's end.
func startWatch(t *testing.T, bin string, env []string, dir string, args ...string) *watcher {
	t.Helper()
	w := &watcher{cmd: exec.Command(bin, args...), changed: make(chan struct{}, 1), done: make(chan struct{})}
	w.cmd.Env, w.cmd.Dir, w.cmd.Stderr = env, dir, &w.stderr
	w.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := w.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := w.cmd.Process.Pid
	t.Cleanup(func() {
		syscall.Kill(-pid, syscall.SIGKILL)
		<-w.done
		if !w.waited {
			w.cmd.Wait()
		}
	})
	go func() {
		defer close(w.done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var l watchLine
			err := json.Unmarshal(sc.Bytes(), &l)
			if err == nil {
				l.at, err = time.Parse(time.RFC3339Nano, l.Time)
			}
			w.mu.Lock()
			if err != nil && w.bad == nil {
				w.bad = fmt.Errorf("line %q: %w", sc.Text(), err)
			}
			w.parsed = append(w.parsed, l)
			w.mu.Unlock()
			w.notify()
		}
	}()
	return w
}

func (w *watcher) notify() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// lines are the lines read so far.
func (w *watcher) lines() []watchLine {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]watchLine(nil), w.parsed...)
}

// await waits, at most 30 s, until ok says the lines read so far are
// what the test waits for; a line that is not a watch's JSON fails it.
func (w *watcher) await(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		w.mu.Lock()
		bad := w.bad
		w.mu.Unlock()
		if bad != nil {
			t.Fatal(bad)
		}
		if ok() {
			return
		}
		select {
		case <-w.changed:
		case <-w.done:
			if !ok() {
				t.Fatalf("status --watch ended before %s; stderr: %s", what, w.stderr.String())
			}
			return
		case <-deadline:
			t.Fatalf("no %s after 30s; lines: %d", what, len(w.lines()))
		}
	}
}

// wait waits, at most 30 s, for the watch to end, and returns its exit
// code.
func (w *watcher) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-w.done:
	case <-time.After(30 * time.Second):
		t.Fatal("status --watch still running 30s after SIGINT")
	}
	err := w.cmd.Wait()
	w.waited = true
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// In a real terminal, status --watch keeps a line per node and redraws
// them in place: a node that stopped is still one line, now saying so;
// Ctrl-C ends it with 130.
func TestTerminalWatch(t *testing.T) {
	t.Parallel()
	bin := raceBinary(t)
	dir := filepath.Join(t.TempDir(), "run")
	killNodes(t, dir)
	env := []string{"MULTI_RUNDIR=" + dir, "GORACE=atexit_sleep_ms=0", "TERM=xterm-256color"}
	multiCmd := func(args ...string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("multi %q: %v\n%s", args, err, out)
		}
	}
	multiCmd("start", "w1", "w2", "--", "sleep", "300")

	tm := newTmux(t, env...)
	tm.typeLine(bin + " status --watch w1 w2; echo rc=$?")
	tm.await("both nodes running", regexp.MustCompile(`(?m)^w1: running \(pid \d+\)\nw2: running \(pid \d+\)$`))
	multiCmd("stopwait", "w2")
	scr := tm.await("w2 stopped", regexp.MustCompile(`(?m)^w1: running \(pid \d+\)\nw2: stopped$`))
	if n := len(regexp.MustCompile(`(?m)^w2: `).FindAllString(scr, -1)); n != 1 {
		t.Errorf("%d lines of w2, want 1, redrawn:\n%s", n, scr)
	}
	if !strings.Contains(tm.screen(true), "\033[") {
		t.Errorf("no colour on a terminal:\n%q", tm.screen(true))
	}
	tm.run("send-keys", "-t", "main", "C-c")
	tm.await("exit status 130", regexp.MustCompile(`(?m)^rc=130$`))
}
