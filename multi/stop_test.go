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
