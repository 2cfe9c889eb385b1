package pin

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

// A SafePID is a pid that [CheckPID] has passed: never <= 1, never this
// process. The calls that signal a pid or pin it (kill(2), pidfd_open(2))
// take only a SafePID, so that no pid reaches them unchecked, and each pid
// is checked once, where it was read.
type SafePID int

// CheckPID refuses the pids multi must never signal; it is the one check
// on each path from a pid that was read to a signal.
func CheckPID(pid int) (SafePID, error) {
	if pid <= 1 || pid == os.Getpid() {
		return 0, fmt.Errorf("%w %d", ErrUnsafePID, pid)
	}
	return SafePID(pid), nil
}

// ErrNotRunning: nothing holds the node's lock, so there is nothing to
// signal. It is what the signal path finds, not a verb's failure: no verb
// returns it. Stop, StopWait, Kill and Send treat a node that is not
// running as done, as LSB init scripts treat stopping a stopped service:
// its Result has Err nil, PID 0 and Outcome NotRunning (StaleRemoved when a
// stale pidfile was removed).
var ErrNotRunning = errors.New("not running")

// Errors of the signal path that callers test with [errors.Is].
var (
	// ErrElsewhere: the lock is held by a process that cannot be named from
	// here (another pid namespace); it is not signalled.
	ErrElsewhere = errors.New("running in another pid namespace (not signalled)")
	// ErrUnsafePID: the kernel named a pid that must never be signalled
	// (<= 1, or this process).
	ErrUnsafePID = errors.New("refusing to signal pid")
	// ErrOwnNode: the node's lock is held by the calling process itself (a
	// program that locked the pidfile with pidfile.Acquire or OwnFromEnv
	// and drives a Cluster too): nothing is signalled, and the lock is
	// kept.
	ErrOwnNode = errors.New("the calling process's own node")
)
