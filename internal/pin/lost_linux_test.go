package pin

import (
	"os/exec"
	"syscall"
	"testing"

	"github.com/multi-launcher/multi/nodes"
)

// SignalLost signals the process its record names and no other: a record
// whose start time or pidfd inode is not the live process's (the pid was
// recycled after the record was read) signals nothing. Whether a signal was
// sent shows in how the process dies: the first fatal signal sent to it
// decides its exit status, so the test's own SIGKILL ends it as SIGKILL
// only if SignalLost sent no SIGTERM before.
func TestSignalLostChecksIdentity(t *testing.T) {
	// victim starts a process and returns its record and a func that ends
	// it and says which signal it died of.
	victim := func() (nodes.Started, func() syscall.Signal) {
		cmd := exec.Command("sleep", "300")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		end := func() syscall.Signal {
			cmd.Process.Kill()
			cmd.Wait()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			return ws.Signal()
		}
		t.Cleanup(func() { end() })
		st, err := Identify(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		return st, end
	}
	wrong := map[string]func(nodes.Started) nodes.Started{
		// As a record from a kernel without pidfs: pid and start time.
		"start time": func(st nodes.Started) nodes.Started {
			st.StartTicks++
			st.PidfdIno = 0
			return st
		},
		"pidfd inode": func(st nodes.Started) nodes.Started {
			st.PidfdIno++
			return st
		},
	}
	for what, change := range wrong {
		st, end := victim()
		if what == "pidfd inode" && st.PidfdIno == 0 {
			end()
			continue // no pidfs here: records carry no inode
		}
		ok, err := SignalLost(change(st), syscall.SIGTERM)
		if ok || err != nil {
			t.Errorf("SignalLost of a record whose %s is not the process's = %v, %v; want false, nil", what, ok, err)
		}
		if sig := end(); sig != syscall.SIGKILL {
			t.Errorf("a record with another %s: the process died of %v, not of the test's SIGKILL: SignalLost signalled it", what, sig)
		}
	}
	st, end := victim()
	if ok, err := SignalLost(st, syscall.SIGTERM); !ok || err != nil {
		t.Fatalf("SignalLost of the process's own record = %v, %v; want true, nil", ok, err)
	}
	if sig := end(); sig != syscall.SIGTERM {
		t.Errorf("signalled through its own record, the process died of %v; want SIGTERM", sig)
	}
}
