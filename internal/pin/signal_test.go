package pin

import (
	"syscall"
	"testing"
)

func TestParseSignal(t *testing.T) {
	t.Parallel()
	good := map[string]syscall.Signal{"KILL": syscall.SIGKILL, "SIGKILL": syscall.SIGKILL, "kill": syscall.SIGKILL,
		"9": syscall.SIGKILL, "HUP": syscall.SIGHUP, "TERM": syscall.SIGTERM, "15": syscall.SIGTERM}
	for k, v := range unixSignals {
		good[k] = v
	}
	for in, want := range good {
		if got, err := ParseSignal(in); err != nil || got != want {
			t.Errorf("ParseSignal(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "-9", "NOPE", "SIG", "99999999999", "9x", "1000"} {
		if _, err := ParseSignal(bad); err == nil {
			t.Errorf("ParseSignal(%q) succeeded", bad)
		}
	}
	if SignalName(syscall.SIGKILL) != "KILL" {
		t.Errorf("SignalName(SIGKILL) = %q", SignalName(syscall.SIGKILL))
	}
}
