//go:build unix

package multi

import (
	"testing"
)

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
