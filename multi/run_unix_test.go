//go:build unix

package multi

import (
	"syscall"
	"testing"

	"github.com/multi-launcher/multi/internal/pin"
)

func TestEndsNode(t *testing.T) {
	for _, c := range []struct {
		op   string
		sig  syscall.Signal
		want bool
	}{
		{"stop", syscall.SIGTERM, true},
		{"stop", syscall.SIGKILL, true},
		{"stop", syscall.SIGHUP, false},
		{"stop", syscall.SIGUSR1, false},
		{"stopwait", syscall.SIGHUP, true},
		{"kill", syscall.SIGKILL, true},
		{"restart", syscall.SIGTERM, true},
	} {
		if got := endsNode(c.op, c.sig); got != c.want {
			t.Errorf("endsNode(%s, %s) = %v; want %v", c.op, pin.SignalName(c.sig), got, c.want)
		}
	}
}

func TestParseOnExit(t *testing.T) {
	for s, want := range map[string]OnExit{"": StopAll, "stop-all": StopAll, "restart": RestartNode, "ignore": Ignore} {
		if got, err := ParseOnExit(s); err != nil || got != want {
			t.Errorf("ParseOnExit(%q) = %q, %v; want %q", s, got, err, want)
		}
	}
	if _, err := ParseOnExit("always"); err == nil {
		t.Error("ParseOnExit(always): no error")
	}
}
