package cli

import (
	"io"
	"os"
	"strings"
	"testing"
)

// README's flag table lists every flag of every command: a flag only
// --help shows (--settle and --lost were) is one a reader of the README
// never learns of.
func TestReadmeListsEveryFlag(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n| flag | commands | meaning |\n")
	if !ok {
		t.Fatal("README.md has no flag table (| flag | commands | meaning |)")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	app := newApp(io.Discard, io.Discard)
	for _, cmd := range app.Commands {
		for _, f := range cmd.Flags {
			name := f.Names()[0]
			if name == "help" || name == "generate-bash-completion" {
				continue
			}
			if !strings.Contains(table, "`--"+name) {
				t.Errorf("README's flag table has no --%s (of multi %s)", name, cmd.Name)
			}
		}
	}
}
