//go:build unix

package pin

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/multi-launcher/multi/nodes/pidfile"
)

// unixSignals are signals ParseSignal must know that only Unix has.
var unixSignals = map[string]syscall.Signal{"USR1": syscall.SIGUSR1}

// No pid <= 1, no negative pid and never this process's own reaches
// kill: CheckPID is the only way to a SafePID.
func TestCheckPIDRefuses(t *testing.T) {
	for _, pid := range []int{-1, 0, 1, os.Getpid()} {
		if p, err := CheckPID(pid); err == nil || !errors.Is(err, ErrUnsafePID) || p != 0 {
			t.Errorf("CheckPID(%d) = %d, %v; want ErrUnsafePID", pid, p, err)
		}
	}
	if p, err := CheckPID(os.Getppid()); err != nil || int(p) != os.Getppid() {
		t.Errorf("CheckPID(parent %d) = %d, %v", os.Getppid(), p, err)
	}
}

// A pidfile nobody holds is stale, whatever pid its text names: nothing
// is signalled (here a live process of ours, named in the file, which a
// signal would end), and SignalNode says not running.
func TestSignalNodeStaleNamesLiveProcess(t *testing.T) {
	victim := exec.Command("sleep", "300")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		victim.Process.Kill()
		victim.Wait()
	}()
	path := filepath.Join(t.TempDir(), "w1.pid")
	if err := os.WriteFile(path, []byte(pidText(victim.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	info, err := SignalNode(path, 0, syscall.SIGTERM, false)
	if !errors.Is(err, ErrNotRunning) || info.State != pidfile.Stale {
		t.Fatalf("SignalNode of a stale pidfile: %+v, %v; want stale, not running", info, err)
	}
	if err := victim.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the process the stale pidfile names was signalled: %v", err)
	}
	var ws syscall.WaitStatus
	if pid, _ := syscall.Wait4(victim.Process.Pid, &ws, syscall.WNOHANG, nil); pid != 0 {
		t.Fatalf("the process the stale pidfile names exited: %v", ws)
	}
}

func pidText(pid int) string { return strconv.Itoa(pid) + "\n" }
