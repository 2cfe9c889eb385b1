package multi

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// IsStopSignal reports whether sig stops a process rather than asking it
// to end: SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU.
func IsStopSignal(sig syscall.Signal) bool { return isStopSignal(sig) }

// SignalName returns the signal's name without "SIG": "TERM", "KILL".
func SignalName(sig syscall.Signal) string {
	if name := signalName(sig); name != "" {
		return strings.TrimPrefix(name, "SIG")
	}
	return fmt.Sprint(int(sig))
}

// ParseSignal parses a signal the way celery multi users write it after
// the dash: "KILL", "SIGKILL", "kill", "9". Signal 0 and unknown names are
// errors.
func ParseSignal(s string) (syscall.Signal, error) {
	if s == "" {
		return 0, errors.New("empty signal")
	}
	if s[0] >= '0' && s[0] <= '9' {
		n := 0
		for _, c := range s {
			if c < '0' || c > '9' || n > 1000 {
				return 0, fmt.Errorf("bad signal %q", s)
			}
			n = n*10 + int(c-'0')
		}
		if n < 1 || n > maxSignal {
			return 0, fmt.Errorf("signal %d out of range 1-%d", n, maxSignal)
		}
		return syscall.Signal(n), nil
	}
	name := strings.ToUpper(s)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	if sig := signalNum(name); sig != 0 {
		return sig, nil
	}
	return 0, fmt.Errorf("unknown signal %q", s)
}

// A safePID is a pid that [checkPID] has passed: never <= 1, never this
// process. The calls that signal a pid or pin it (kill(2), pidfd_open(2))
// take only a safePID, so that no pid reaches them unchecked, and each pid
// is checked once, where it was read.
type safePID int

// checkPID refuses the pids multi must never signal; it is the one check
// on each path from a pid that was read to a signal.
func checkPID(pid int) (safePID, error) {
	if pid <= 1 || pid == os.Getpid() {
		return 0, fmt.Errorf("%w %d", ErrUnsafePID, pid)
	}
	return safePID(pid), nil
}
