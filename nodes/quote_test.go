package nodes_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/nodes"
)

func TestQuote(t *testing.T) {
	t.Parallel()
	argv := []string{"sh", "-c", "echo 'it''s' $HOME", "", "a b", "--x=%n@h,1.2/3:4+5", `"dq"`, "tab\there"}
	q := nodes.Quote(argv)
	if want := `sh -c 'echo '\''it'\'''\''s'\'' $HOME' '' 'a b' --x=%n@h,1.2/3:4+5 '"dq"' 'tab	here'`; q != want {
		t.Errorf("Quote = %s\nwant    %s", q, want)
	}
	// The shell reads it back as the same words.
	out, err := exec.Command("sh", "-c", `for a in "$@"; do printf '%s\0' "$a"; done`, "sh", "placeholder").Output()
	if err == nil && string(out) == "placeholder\x00" {
		got, err := exec.Command("sh", "-c", "set -- "+q+`; for a in "$@"; do printf '%s\0' "$a"; done`).Output()
		if err != nil || string(got) != strings.Join(argv, "\x00")+"\x00" {
			t.Errorf("sh read back %q, %v", got, err)
		}
	}
}
