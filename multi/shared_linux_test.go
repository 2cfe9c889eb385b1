package multi_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/multi"
)

// A pidfile folder others can write to, accepted: the user who can
// rename there puts w2's pidfile in place of w1's (the holder swap of
// integration's holder_swap.txtar, in the folder the flag accepted). Stop, StopWait, Kill and Send of w1 signal
// nothing and say whose lock and whose record disagree; w2, which the user
// could not signal themselves, gets nothing. With the rundir shared too
// there is no record to confirm the holder: nothing is signalled either.
func TestSharedFolderSwappedPidfile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, for a folder of root's that others can write to")
	}
	t.Parallel()
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(shared, 0o777|os.ModeSticky)
	c := cluster(t, "", "w1", "w2")
	for i := range c.Nodes {
		c.Nodes[i].PidFile = filepath.Join(shared, c.Nodes[i].Name+".pid")
	}
	c.AllowSharedFolders = true
	if _, err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // the cluster's own cleanup looks at w1.pid only
		for _, n := range c.Nodes {
			if p := testutil.Holder(n.PidFile); p > 1 {
				killGroup(p)
			}
		}
	})
	w1, w2 := holderOf(t, c.Nodes[0]), holderOf(t, c.Nodes[1])
	if err := os.Rename(c.Nodes[1].PidFile, c.Nodes[0].PidFile); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killGroup(w1) })
	one, err := c.Only("w1")
	if err != nil {
		t.Fatal(err)
	}
	want := "is locked by pid " + strconv.Itoa(w2)
	verbs := map[string]func() ([]multi.Result, error){
		"Stop": func() ([]multi.Result, error) { return one.Stop(context.Background(), multi.StopOptions{}) },
		"Kill": func() ([]multi.Result, error) { return one.Kill(context.Background(), multi.StopOptions{}) },
		"Send": func() ([]multi.Result, error) { return one.Send(context.Background(), 10, multi.StopOptions{}) },
	}
	for name, verb := range verbs {
		_, err := verb()
		if !errors.Is(err, multi.ErrHolderMismatch) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s of w1: %v; want ErrHolderMismatch saying %q", name, err, want)
		}
		for _, pid := range []int{w1, w2} {
			if signalled(pid) {
				t.Fatalf("%s of w1: pid %d was signalled", name, pid)
			}
		}
	}

	// The rundir shared too: its records are not read, so none confirms.
	rundir := c.RunDir
	os.Chmod(rundir, 0o777|os.ModeSticky)
	defer os.Chmod(rundir, 0o700)
	if _, err := one.Stop(context.Background(), multi.StopOptions{}); !errors.Is(err, multi.ErrUnconfirmedHolder) || !strings.Contains(err.Error(), "no record names the process") {
		t.Errorf("Stop of w1 with a shared rundir: %v; want errUnconfirmedHolder, no record", err)
	}
	if signalled(w2) {
		t.Fatalf("pid %d was signalled", w2)
	}
}

// signalled reports whether pid is gone, dying, or has a signal pending:
// what a TERM or KILL sent to a sleep leaves, the moment it is sent.
func signalled(pid int) bool {
	p, err := proc.Read(pid)
	if err != nil || p.Gone() {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return true
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		if (k == "SigPnd" || k == "ShdPnd") && strings.Trim(strings.TrimSpace(v), "0") != "" {
			return true
		}
	}
	return false
}
