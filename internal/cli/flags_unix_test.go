//go:build unix

package cli

import (
	"syscall"
	"testing"
)

// The -SIGNAL is typed, and refused where it would make the verb wait
// forever or where the verb sends no signal of the user's choice.
func TestVerbSignalTyped(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		verb, sig string
		want      syscall.Signal // 0: a usage error
	}{
		{"stop", "-HUP", syscall.SIGHUP},
		{"stop", "-STOP", syscall.SIGSTOP},
		{"stopwait", "-INT", syscall.SIGINT},
		{"stopwait", "-STOP", 0},
		{"restart", "-TSTP", 0},
		{"run", "-9", syscall.SIGKILL},
		{"run", "-STOP", 0},
		{"kill", "-TERM", 0},
		{"status", "-TERM", 0},
	} {
		a, err := parseFor(t, tt.verb, "w1", tt.sig)
		switch {
		case tt.want == 0 && err == nil:
			t.Errorf("%s w1 %s: no error; want a usage error", tt.verb, tt.sig)
		case tt.want != 0 && (err != nil || a.Signal != tt.want || a.SignalText != tt.sig[1:]):
			t.Errorf("%s w1 %s: %+v, %v; want %v", tt.verb, tt.sig, a, err, tt.want)
		}
	}
}
