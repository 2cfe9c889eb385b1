package integration

import (
	"bytes"
	"fmt"
	"math/bits"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/internal/proc"
)

// stuckMark starts the line breakStuckForks writes for each process it
// kills: make test-arm64 runs the failed tests once more only when the
// run's output holds it.
const stuckMark = "emulator: killed a fork child stuck before its exec"

// stuckAfter is how long a fork child may stay before its exec: one
// takes milliseconds, even emulated.
const stuckAfter = 20 * time.Second

// breakStuckForks, under an emulator, kills every process that stays for
// stuckAfter a fork child of a process of this test run that never got
// to its exec: qemu-user now and then deadlocks such a child (every
// signal blocked, one thread, its parent's command line; see
// docs/reliability.md, "arm64 under qemu"), and its script would hang
// until the test binary's timeout. The script then fails with its node's
// start; the kill is said on stderr.
func breakStuckForks() {
	self := os.Getpid()
	seen := map[string]time.Time{} // pid and start time: when first seen stuck
	for range time.Tick(5 * time.Second) {
		now := time.Now()
		still := map[string]time.Time{}
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self {
				continue
			}
			ppid, start, ok := stuckChild(pid)
			if !ok || !descends(ppid, self) {
				continue
			}
			key := fmt.Sprintf("%d/%d", pid, start)
			first, was := seen[key]
			if !was {
				first = now
			}
			still[key] = first
			if now.Sub(first) >= stuckAfter {
				// Stuck before its exec: it runs no code of any node, and
				// it is a child of this run's (pid, start time checked).
				if _, again, ok := stuckChild(pid); ok && again == start {
					syscall.Kill(pid, syscall.SIGKILL)
					fmt.Fprintf(os.Stderr, "%s: pid %d, child of pid %d, after %s\n", stuckMark, pid, ppid, now.Sub(first).Round(time.Second))
				}
				delete(still, key)
			}
		}
		seen = still
	}
}

// stuckChild reports whether pid looks like a fork child stuck before its
// exec: one thread (two under qemu), every signal blocked, the command
// line of its parent;
// with its parent and its start time.
func stuckChild(pid int) (ppid int, start uint64, ok bool) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, false
	}
	var threads, blocked string
	for _, line := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(line, ":")
		switch k {
		case "Threads":
			threads = strings.TrimSpace(v)
		case "SigBlk":
			blocked = strings.TrimSpace(v)
		}
	}
	// Every signal blocked but KILL and STOP (the kernel never blocks
	// them), 32 and 33 (glibc's), and BUS and SEGV, which qemu keeps
	// for its own faults: a deadlocked child seen under qemu 7.2 blocked
	// all but 7, 9, 11, 19, 32 and 33, and had qemu's second thread.
	mask, err := strconv.ParseUint(blocked, 16, 64)
	if threads != "1" && threads != "2" || err != nil || bits.OnesCount64(mask) < 56 {
		return 0, 0, false
	}
	st, err := proc.Read(pid)
	if err != nil || st.PPID <= 1 {
		return 0, 0, false
	}
	cmd, err1 := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	parent, err2 := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", st.PPID))
	if err1 != nil || err2 != nil || len(cmd) == 0 || !bytes.Equal(cmd, parent) {
		return 0, 0, false
	}
	return st.PPID, st.StartTicks, true
}

// descends reports whether pid is ancestor or one of its descendants.
func descends(pid, ancestor int) bool {
	for range 64 {
		if pid == ancestor {
			return true
		}
		if pid <= 1 {
			return false
		}
		st, err := proc.Read(pid)
		if err != nil {
			return false
		}
		pid = st.PPID
	}
	return false
}
