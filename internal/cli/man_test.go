package cli

import (
	"bytes"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// The manual page is valid roff for the man macros: groff, with every
// warning on, has nothing to say about it, nor mandoc's linter at its
// error level, when they are installed (.ci/run installs groff-base;
// TestManPageStructure checks the page without them).
func TestManPageIsValidRoff(t *testing.T) {
	_, page, _ := runCLI(t, "man")
	ran := false
	for _, lint := range [][]string{
		{"groff", "-man", "-Tutf8", "-ww", "-z"},
		{"mandoc", "-Tlint", "-W", "error"},
	} {
		if _, err := exec.LookPath(lint[0]); err != nil {
			continue
		}
		ran = true
		cmd := exec.Command(lint[0], lint[1:]...)
		cmd.Stdin = strings.NewReader(page)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil || out.Len() > 0 {
			t.Errorf("%s: %v\n%s", strings.Join(lint, " "), err, out.String())
		}
	}
	if !ran {
		t.Skip("neither groff nor mandoc is installed (apt-get install groff-base)")
	}
}

// The manual page has its sections in order, only requests of the man
// macros, no text line read as a request, and under COMMANDS a
// subsection per command that lists every flag of that command.
func TestManPageStructure(t *testing.T) {
	code, page, _ := runCLI(t, "man")
	if code != exitOK || !strings.HasPrefix(page, ".TH MULTI 1\n") {
		t.Fatalf("man: exit %d, page begins %.40q; want .TH MULTI 1", code, page)
	}
	at := 0
	for _, sec := range []string{"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COMMANDS", "EXIT STATUS", "ENVIRONMENT", "FILES"} {
		i := strings.Index(page[at:], "\n.SH "+sec+"\n")
		if i < 0 {
			t.Fatalf("no .SH %s after byte %d", sec, at)
		}
		at += i + 1
	}
	macros := map[string]bool{".TH": true, ".SH": true, ".SS": true, ".PP": true, ".TP": true,
		".B": true, ".BR": true, ".I": true, ".EX": true, ".EE": true, ".RS": true, ".RE": true}
	for i, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'") {
			if req, _, _ := strings.Cut(line, " "); !macros[req] {
				t.Errorf("line %d: %q: not a man macro (text read as a request?)", i+1, line)
			}
		}
	}
	commands := page[strings.Index(page, "\n.SH COMMANDS\n"):strings.Index(page, "\n.SH EXIT STATUS\n")]
	app := newApp(io.Discard, io.Discard)
	for _, cmd := range app.VisibleCommands() {
		head := "\n.SS " + roffText(strings.Join(cmd.Names(), ", ")) + "\n"
		start := strings.Index(commands, head)
		if start < 0 {
			t.Errorf("COMMANDS has no %q", head)
			continue
		}
		sub := commands[start+len(head):]
		if end := strings.Index(sub, "\n.SS "); end >= 0 {
			sub = sub[:end]
		}
		if !strings.HasPrefix(sub, roffText(cmd.Usage)+"\n") {
			t.Errorf("multi %s: its subsection begins %.60q, not its usage %q", cmd.Name, sub, cmd.Usage)
		}
		for _, f := range cmd.VisibleFlags() {
			if tag := `.TP` + "\n" + `\fB\-\-` + roffText(f.Names()[0]) + `\fR`; len(f.Names()[0]) > 1 && !strings.Contains(sub, tag) {
				t.Errorf("multi %s: no %q in its subsection", cmd.Name, tag)
			}
		}
	}
}

// roffText keeps text text: a minus and a backslash escaped, a leading
// dot or quote made harmless.
func TestRoffText(t *testing.T) {
	for in, want := range map[string]string{
		"--ready=fd:3":        `\-\-ready=fd:3`,
		`C:\dir`:              `C:\edir`,
		".hidden\n'quoted\nx": "\\&.hidden\n\\&'quoted\nx",
	} {
		if got := roffText(in); got != want {
			t.Errorf("roffText(%q) = %q, want %q", in, got, want)
		}
	}
}
