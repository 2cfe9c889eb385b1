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
	table := readmeFlagTable(t)
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

// readmeFlagTable returns the rows of README's flag table.
func readmeFlagTable(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n| flag | commands | meaning |\n")
	if !ok {
		t.Fatal("README.md has no flag table (| flag | commands | meaning |)")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	return table
}

// readmeFlagRows maps each flag README's flag table names to the commands
// its row says it belongs to ("all", "all but a, b", or "a, b").
func readmeFlagRows(t *testing.T) map[string][]string {
	t.Helper()
	table := readmeFlagTable(t)
	rows := map[string][]string{}
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(strings.ReplaceAll(line, `\|`, "/"), " | ")
		if len(cells) < 3 {
			continue
		}
		for _, part := range strings.Split(cells[0], "`") {
			name, ok := strings.CutPrefix(part, "--")
			if !ok {
				continue
			}
			name, _, _ = strings.Cut(name, "=")
			name, _, _ = strings.Cut(name, "[")
			rows[name] = append(rows[name], strings.TrimSpace(cells[1]))
		}
	}
	return rows
}

// covers reports whether a flag row's commands column names cmd.
func covers(col, cmd string) bool {
	if col == "all" {
		return true
	}
	but, isBut := strings.CutPrefix(col, "all but ")
	list := col
	if isBut {
		list = but
	}
	in := false
	for _, c := range strings.Split(list, ",") {
		c = strings.TrimSpace(c)
		c, _, _ = strings.Cut(c, " ") // "status (with --ready)"
		in = in || c == cmd
	}
	return in != isBut
}

// Every flag of every command is in README's flag table on a row that
// names that command, and in the man page: a flag added to a verb (as
// issues 21 and 22 added --ready, --health, --live, --max-restarts, ...)
// cannot be missing from either, nor listed under other verbs only.
func TestReadmeFlagRowsNameTheirCommands(t *testing.T) {
	rows := readmeFlagRows(t)
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	_, man, _ := runCLI(t, "man")
	app := newApp(io.Discard, io.Discard)
	for _, cmd := range app.Commands {
		if cmd.Hidden || cmd.Name == "help" {
			continue
		}
		if !strings.Contains(man, "\n.SS "+cmd.Name+"\n") {
			t.Errorf("the man page has no section for multi %s", cmd.Name)
		}
		if !strings.Contains(readme, "\n| `"+cmd.Name+"` | ") {
			t.Errorf("README's command table has no row for multi %s", cmd.Name)
		}
		for _, f := range cmd.Flags {
			name := f.Names()[0]
			if name == "help" || name == "generate-bash-completion" {
				continue
			}
			if !strings.Contains(man, roffText("--"+name)) {
				t.Errorf("the man page has no --%s (of multi %s)", name, cmd.Name)
			}
			cols, ok := rows[name]
			if !ok {
				continue // TestReadmeListsEveryFlag says so
			}
			named := false
			for _, col := range cols {
				named = named || covers(col, cmd.Name)
			}
			if !named {
				t.Errorf("README's flag table lists --%s for %q, not for multi %s", name, cols, cmd.Name)
			}
		}
	}
}
