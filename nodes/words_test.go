package nodes_test

import (
	"slices"
	"testing"

	"github.com/multi-launcher/multi/nodes"
)

// Words splits as a shell does, and reads back what Quote writes.
func TestWords(t *testing.T) {
	t.Parallel()
	for s, want := range map[string][]string{
		`test -e /x`:               {"test", "-e", "/x"},
		`  sh  -c 'exit 0'  `:      {"sh", "-c", "exit 0"},
		`curl -fsS "http://a/b c"`: {"curl", "-fsS", "http://a/b c"},
		`a\ b "x\"y" '' end`:       {"a b", `x"y`, "", "end"},
		`$'a\x01b' $'it\'s'`:       {"a\x01b", "it's"},
		``:                         nil,
		`check w1\ with\ spaces`:   {"check", "w1 with spaces"},
		`"$HOME" '$HOME'`:          {"$HOME", "$HOME"},
		`pre'fix'"ed"`:             {"prefixed"},
	} {
		if got, err := nodes.Words(s); err != nil || !slices.Equal(got, want) {
			t.Errorf("Words(%q) = %q, %v; want %q", s, got, err, want)
		}
	}
	for _, s := range []string{`'open`, `"open`, `end\`, `$'open`, `$'\x4'`} {
		if got, err := nodes.Words(s); err == nil {
			t.Errorf("Words(%q) = %q; want an error", s, got)
		}
	}
	for _, argv := range [][]string{{"a b", "it's", "x\x01y", "", "plain", "tab\there", "$HOME"}, {"w1 two"}} {
		if got, err := nodes.Words(nodes.Quote(argv)); err != nil || !slices.Equal(got, argv) {
			t.Errorf("Words(Quote(%q)) = %q, %v", argv, got, err)
		}
	}
}
