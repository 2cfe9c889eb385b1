package supervise

import (
	"encoding/json"
	"testing"
	"time"
)

// The nodes' lines as run prints them: prefixed, stamped, or as JSON
// objects that decode back to what the node wrote.
func TestFormatLine(t *testing.T) {
	now := time.Date(2026, 12, 5, 7, 41, 30, 453250123, time.FixedZone("CET", 3600))
	for _, c := range []struct {
		o    Options
		line string
		want string
	}{
		{Options{}, "hello\n", "w1 | hello\n"},
		{Options{}, "a piece", "w1 | a piece\n"},
		{Options{Timestamps: true}, "hello\n", "2026-12-05T06:41:30.453250Z w1 | hello\n"},
		{Options{JSONLines: true}, "say \"hi\"\t\n", `{"time":"2026-12-05T06:41:30.453250Z","node":"w1","stream":"stderr","line":"say \"hi\"\t"}` + "\n"},
	} {
		if got := string(c.o.formatLine(nil, now, "w1", "stderr", []byte(c.line))); got != c.want {
			t.Errorf("%+v %q: %q; want %q", c.o, c.line, got, c.want)
		}
	}
	var v struct{ Time, Node, Stream, Line string }
	b := (&Options{JSONLines: true}).formatLine(nil, now, "w1", "stdout", []byte("x\x00y\n"))
	if err := json.Unmarshal(b, &v); err != nil || v.Line != "x\x00y" || v.Stream != "stdout" {
		t.Errorf("%s: %+v, %v", b, v, err)
	}
}
