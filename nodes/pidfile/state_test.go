package pidfile_test

import (
	"encoding/json"
	"testing"

	"github.com/multi-launcher/multi/nodes/pidfile"
)

// A State is a word in JSON, the word status prints, and comes back.
func TestStateText(t *testing.T) {
	t.Parallel()
	words := map[pidfile.State]string{pidfile.Absent: "stopped", pidfile.Stale: "stale", pidfile.Running: "running",
		pidfile.Elsewhere: "elsewhere", pidfile.Foreign: "foreign"}
	for s, word := range words {
		b, err := json.Marshal(s)
		if err != nil || string(b) != `"`+word+`"` || s.String() != word {
			t.Errorf("%d: %s, %v, %q; want %q", int(s), b, err, s.String(), word)
		}
		var back pidfile.State
		if err := json.Unmarshal(b, &back); err != nil || back != s {
			t.Errorf("%s: back as %d, %v", b, int(back), err)
		}
	}
	var s pidfile.State
	if err := json.Unmarshal([]byte(`"gone"`), &s); err == nil {
		t.Errorf("an unknown word is read as %v", s)
	}
	if _, err := json.Marshal(pidfile.Foreign + 1); err == nil {
		t.Error("a state with no word is written")
	}
}
