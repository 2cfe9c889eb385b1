//go:build linux

package nodes

import (
	"errors"
	"io/fs"
	"os"
	"testing"
	"time"

	"github.com/multi-launcher/multi/nodes/pidfile"
)

func TestParseProcOddComm(t *testing.T) {
	// A command name may hold spaces and parentheses: fields are counted
	// after the last ')'.
	line := "4242 (a) b) (c) S 7 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100 0\n"
	p, err := parseProc([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := Proc{PID: 4242, Comm: "a) b) (c", State: 'S', PPID: 7, PGID: 4242, Session: 4242, Flags: 4194560, StartTicks: 987654}
	if p != want {
		t.Fatalf("got %+v\nwant %+v", p, want)
	}
	for _, bad := range []string{"", "4242 (x", "4242 (x) S 1 2", "x (y) S 7 1 1 0 -1 0 0 0 0 0 0 0 0 0 0 0 0 0 5 0"} {
		if _, err := parseProc([]byte(bad)); err == nil {
			t.Errorf("parseProc(%q): no error", bad)
		}
	}
}

func TestReadProcSelf(t *testing.T) {
	p, err := ReadProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if p.PID != os.Getpid() || p.PPID != os.Getppid() || p.Gone() || p.StartTicks == 0 {
		t.Fatalf("odd self: %+v", p)
	}
	if d := time.Since(p.Start()); d < 0 || d > 24*time.Hour {
		t.Fatalf("started %s ago", d)
	}
	if _, err := ReadProc(pidfile.MaxPID + 1); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no such pid: %v", err)
	}
	sid, _ := ReadProc(os.Getpid())
	members, err := SessionMembers(sid.Session)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range members {
		found = found || m.PID == os.Getpid()
	}
	if !found {
		t.Fatalf("session %d: %v lacks this process", sid.Session, members)
	}
}
