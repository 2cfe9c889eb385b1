package launch

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// procLimits reads the limits of pid named in /proc/PID/limits ("Max
// open files") as "SOFT HARD".
func procLimits(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/limits")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	row := regexp.MustCompile(`^(Max [a-z ]+?)\s{2,}(\S+)\s+(\S+)`)
	for _, l := range strings.Split(string(b), "\n") {
		if m := row.FindStringSubmatch(l); m != nil {
			out[m[1]] = m[2] + " " + m[3]
		}
	}
	return out
}

// A node's own rlimits are set, soft and hard, in its process before its
// exec, on both paths: its /proc/PID/limits shows them, and the caller's
// other limits are left as they were.
func TestSpawnSetsLimits(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		n := forkTestNode(t, "w1", "sleep", "300")
		set := map[string]string{"nofile": "64", "core": "0", "as": "1G:2G", "nproc": "500:1000"}
		if testutil.Emulator() != "" {
			delete(set, "as") // TestSpawnLowAddressSpace: refused there
		}
		for name, v := range set {
			if err := n.Limits.Set(name, v); err != nil {
				t.Fatal(err)
			}
		}
		ch, err := Spawn(context.Background(), nil, n, os.Environ(), 0)
		if err != nil {
			t.Fatal(err)
		}
		killNode(t, ch)
		execd(t, ch.pid, "sleep")
		got := procLimits(t, ch.pid)
		rows := map[string]string{
			"Max open files":     "64 64",
			"Max core file size": "0 0",
			"Max address space":  "1073741824 2147483648",
			"Max processes":      "500 1000",
		}
		if _, ok := set["as"]; !ok {
			delete(rows, "Max address space")
		}
		for row, want := range rows {
			if got[row] != want {
				t.Errorf("%s: %q; want %q", row, got[row], want)
			}
		}
		if own := procLimits(t, os.Getpid()); got["Max stack size"] != own["Max stack size"] {
			t.Errorf("Max stack size %q; want the caller's, %q", got["Max stack size"], own["Max stack size"])
		}
	})
}

// A low RLIMIT_AS, far below what a Go program (the exec step) has mapped,
// still starts a small command: the step sets it right before its exec.
// Under qemu-user, which answers success to an RLIMIT_AS it keeps to
// itself, the step reads the limit back and the start fails, saying so.
func TestSpawnLowAddressSpace(t *testing.T) {
	bothPaths(t, func(t *testing.T) {
		n := forkTestNode(t, "w1", "sleep", "300")
		if err := n.Limits.Set("as", "32M"); err != nil {
			t.Fatal(err)
		}
		ch, err := Spawn(context.Background(), nil, n, os.Environ(), 0)
		if emu := testutil.Emulator(); emu != "" {
			if err == nil {
				killNode(t, ch)
			}
			if want := "--limit-as=33554432: set RLIMIT_AS, but this process has infinity: limit not kept"; err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Spawn with --limit-as=32M under %s: %v; want %q", emu, err, want)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		killNode(t, ch)
		execd(t, ch.pid, "sleep")
		if got := procLimits(t, ch.pid)["Max address space"]; got != "33554432 33554432" {
			t.Errorf("Max address space %q; want 32M", got)
		}
	})
}

// A limit that cannot be set fails the start, naming the limit and the
// reason, on both paths; the pidfile is removed and no process is left.
// A hard RLIMIT_NOFILE above fs.nr_open is refused even to root.
func TestSpawnLimitRefused(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/fs/nr_open")
	if err != nil {
		t.Skip("no /proc/sys/fs/nr_open:", err)
	}
	nrOpen, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	bothPaths(t, func(t *testing.T) {
		n := forkTestNode(t, "w1", "sleep", "300")
		over := strconv.FormatUint(nrOpen+1, 10)
		if err := n.Limits.Set("nofile", "64:"+over); err != nil {
			t.Fatal(err)
		}
		ch, err := Spawn(context.Background(), nil, n, os.Environ(), 0)
		if err == nil {
			killNode(t, ch)
			t.Fatalf("Spawn with --limit-nofile=64:%s: started (pid %d); want it refused", over, ch.pid)
		}
		want := "--limit-nofile=64:" + over + ": cannot set RLIMIT_NOFILE: operation not permitted"
		if !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Spawn: %v; want %q", err, want)
		}
		if info, err := pidfile.Inspect(n.PidFile); err != nil || info.State != pidfile.Absent {
			t.Errorf("pidfile after the refused start: %+v, %v; want none", info, err)
		}
	})
}

// A node's limits that are not limits (a record edited by hand) fail its
// start before anything is started.
func TestSpawnBadLimit(t *testing.T) {
	n := forkTestNode(t, "w1", "sleep", "300")
	n.Limits = nodes.Limits{NOFILE: "lots"}
	if ch, err := Spawn(context.Background(), nil, n, os.Environ(), 0); err == nil {
		killNode(t, ch)
		t.Fatal("Spawn with nofile \"lots\": started; want an error")
	} else if !errors.Is(err, nodes.ErrBadLimit) {
		t.Errorf("Spawn: %v; want ErrBadLimit", err)
	}
	if _, err := os.Stat(n.PidFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pidfile: %v; want none made", err)
	}
}
