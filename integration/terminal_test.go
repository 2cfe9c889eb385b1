//go:build unix

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// tmuxSession is multi in a real terminal: a tmux server of its own
// (its own socket, so no other session is touched) with one 80x24 window
// running sh.
type tmuxSession struct {
	t      *testing.T
	socket string
}

func newTmux(t *testing.T, env ...string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the terminal tests need it (apt-get install tmux)")
	}
	s := &tmuxSession{t: t, socket: fmt.Sprintf("multi-test-%d-%d", os.Getpid(), time.Now().UnixNano())}
	args := []string{"new-session", "-d", "-x", "80", "-y", "24", "-s", "main"}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	s.run(append(args, "sh")...)
	t.Cleanup(func() { exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	return s
}

func (s *tmuxSession) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", s.socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// typeLine types line and Enter, after clearing the screen.
func (s *tmuxSession) typeLine(line string) {
	s.run("send-keys", "-t", "main", "clear; "+line, "Enter")
}

// screen is the window's text; wrapped lines joined (-J), so a line
// longer than 80 columns shows as one; with colour escapes if escapes.
func (s *tmuxSession) screen(escapes bool) string {
	args := []string{"capture-pane", "-p", "-J", "-t", "main"}
	if escapes {
		args = append(args, "-e")
	}
	return s.run(args...)
}

// await polls the screen until re matches it, for at most 20 seconds.
func (s *tmuxSession) await(what string, re *regexp.Regexp) string {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		scr := s.screen(false)
		if re.MatchString(scr) {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("no %s on the screen after 20s (%s):\n%s", what, re, scr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// killNodes takes down, by process group, every node holding a pidfile's
// lock in dir.
func killNodes(t *testing.T, dir string) {
	t.Cleanup(func() {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.pid"))
		for _, p := range paths {
			if pid := testutil.Holder(p); pid > 1 {
				syscall.Kill(-pid, syscall.SIGKILL)
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

// In a real terminal: stopwait shows what it waits for while it waits;
// Ctrl-C leaves the node running, names it, and exits 130; the status
// table fits 80 columns with long paths and keeps its note; TERM=dumb
// gets no colour.
func TestTerminal(t *testing.T) {
	t.Parallel()
	bin := raceBinary(t)
	dir := filepath.Join(t.TempDir(), "a-rather-long-folder-name-for-the-run-time-files-of-multi", "run")
	far := filepath.Join(t.TempDir(), "srv", "applications", "production", "workers", "pidfiles")
	killNodes(t, dir)
	killNodes(t, far)
	env := []string{"MULTI_RUNDIR=" + dir, "GORACE=atexit_sleep_ms=0", "TERM=xterm-256color"}
	// ig ignores TERM; w1 does not.
	start := exec.Command(bin, "start", "w1", "ig", "--pidfile:ig="+far+"/ig.pid", "--",
		"sh", "-c", `case %n in ig) trap "" TERM;; esac; echo up; while :; do sleep 0.1; done`)
	start.Env = append(os.Environ(), env...)
	if out, err := start.CombinedOutput(); err != nil {
		t.Fatalf("start: %v\n%s", err, out)
	}
	info, err := pidfile.Inspect(filepath.Join(far, "ig.pid"))
	if err != nil || info.State != pidfile.Running {
		t.Fatalf("ig: %+v, %v", info, err)
	}
	ig := info.PID
	for _, n := range []string{"w1", "ig"} { // their traps are set
		awaitFile(t, filepath.Join(dir, n+".log"), "up\n")
	}

	tm := newTmux(t, env...)
	tm.typeLine(bin + " stopwait w1 ig; echo rc=$?")
	tm.await("progress line", regexp.MustCompile(fmt.Sprintf(`stopwait: waiting for 1 of 2: ig \(pid %d\) [0-9]+s…`, ig)))
	tm.run("send-keys", "-t", "main", "C-c")
	scr := tm.await("exit status", regexp.MustCompile(`rc=\d+`))
	want := `w1: stopped \(pid \d+\)\n` + regexp.QuoteMeta(fmt.Sprintf("multi stopwait: interrupted; left as they are, still running: ig (pid %d)\nrc=130\n", ig))
	if !regexp.MustCompile(want).MatchString(scr) || strings.Contains(scr, "FAILED") || strings.Contains(scr, "canceled") {
		t.Errorf("after Ctrl-C:\n%s\nwant %q", scr, want)
	}
	if info, err := pidfile.Inspect(filepath.Join(far, "ig.pid")); err != nil || info.PID != ig {
		t.Errorf("ig after Ctrl-C: %+v, %v; want it left running", info, err)
	}

	// The pidfile's text names another pid than its lock holder.
	if err := os.WriteFile(filepath.Join(far, "ig.pid"), []byte("12345\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Each step echoes its own tag, so that the screen of the step before
	// (until clear has run) is never taken for this one's.
	tm.typeLine(bin + " status; echo status-rc=$?")
	scr = tm.await("status table", regexp.MustCompile(`status-rc=\d+`))
	for _, line := range strings.Split(scr, "\n") {
		if strings.Contains(line, "clear; ") {
			continue // the command line typed, as long as the binary's path
		}
		if n := len([]rune(line)); n > 80 {
			t.Errorf("%d columns: %q", n, line)
		}
	}
	for _, want := range []string{"NODE  STATE", "w1    stopped", "ig    running*", "w1.pid", "ig.pid", "…",
		"the pidfile's text says 12345", "multi forget w1", "status-rc=3"} {
		if !strings.Contains(scr, want) {
			t.Errorf("status table lacks %q:\n%s", want, scr)
		}
	}
	if !strings.Contains(tm.screen(true), "\033[") {
		t.Errorf("no colour on a terminal:\n%q", tm.screen(true))
	}
	tm.typeLine("TERM=dumb " + bin + " status; echo dumb-rc=$?")
	tm.await("status table", regexp.MustCompile(`dumb-rc=\d+`))
	if scr := tm.screen(true); strings.Contains(strings.ReplaceAll(scr, "\033[0m", ""), "\033[3") {
		t.Errorf("colour with TERM=dumb:\n%q", scr)
	}
}

// awaitFile waits, for at most 20 seconds, until the file at path holds
// text.
func awaitFile(t *testing.T, path, text string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), text) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds no %q after 20s", path, text)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
