package nodes_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/nodes"
)

// The bidi overrides and isolates, zero-width and other format
// characters (Unicode Cf), and the line and paragraph separators are bad
// names: printed raw they make a name read otherwise than it is.
func TestCheckNameFormatCharacters(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"w\u202e1", "\u202dw1", "w\u2066x\u2069", "w\u200b1", "\ufeffw1", "w\u00ad1", "w\u2028", "w\u2029"} {
		err := nodes.CheckName(name)
		if !errors.Is(err, nodes.ErrBadName) || !strings.Contains(err.Error(), "format character") {
			t.Errorf("CheckName(%q) = %v; want ErrBadName naming a format character", name, err)
		}
		if strings.ContainsAny(err.Error(), "\u202e\u202d\u2066\u200b\ufeff\u00ad\u2028\u2029") {
			t.Errorf("CheckName(%q): the error %q holds the character raw", name, err)
		}
	}
	for _, name := range []string{"w1", "wörker", "工人", "w-1.a_b"} {
		if err := nodes.CheckName(name); err != nil {
			t.Errorf("CheckName(%q) = %v; want nil", name, err)
		}
	}
}

func TestPrintable(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/run/w1.pid":           "/run/w1.pid",
		`C:\plain`:              `C:\plain`,
		"wörker 工人":             "wörker 工人",
		"a\x1b[31mred":          `a\x1b[31mred`,
		"gnp.\u202etxt":         `gnp.\u202etxt`,
		"line\nforged":          `line\x0aforged`,
		"bad\xffutf8\\":         `bad\xffutf8\\`,
		"c1\u0085 del\x7f":      `c1\u0085 del\x7f`,
		"sep\u2028zw\u200bjoin": `sep\u2028zw\u200bjoin`,
	} {
		if got := nodes.Printable(in); got != want {
			t.Errorf("Printable(%q) = %q; want %q", in, got, want)
		}
	}
}

// A command word with a control or format character is printed $'...'
// with the bytes escaped, and a shell that knows $'...' reads back the
// same words.
func TestQuoteEscapesControls(t *testing.T) {
	t.Parallel()
	argv := []string{"app", "--name=a\u202eb", "\x1b]0;title\x07", "it's\\", "bad\xff"}
	q := nodes.Quote(argv)
	want := `app $'--name=a\xe2\x80\xaeb' $'\x1b]0;title\x07' 'it'\''s\' $'bad\xff'`
	if q != want {
		t.Errorf("Quote = %s\nwant    %s", q, want)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to read the line back")
	}
	got, err := exec.Command(bash, "-c", "set -- "+q+`; for a in "$@"; do printf '%s\0' "$a"; done`).Output()
	if err != nil || string(got) != strings.Join(argv, "\x00")+"\x00" {
		t.Errorf("bash read back %q, %v", got, err)
	}
}

// Control characters and invalid UTF-8 are bad names, and so is a name
// too long for the files made from it, with the limit stated.
func TestCheckNameControlAndLength(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"w\n1", "w\x1b[31m", "w\x7f", "w\u0085", "w\xff", "\t"} {
		err := nodes.CheckName(name)
		if !errors.Is(err, nodes.ErrBadName) || !strings.Contains(err.Error(), "contains a control character") {
			t.Errorf("CheckName(%q) = %v", name, err)
		}
	}
	if err := nodes.CheckName(strings.Repeat("a", nodes.MaxNameLen)); err != nil {
		t.Errorf("a name of %d bytes: %v", nodes.MaxNameLen, err)
	}
	for _, n := range []int{nodes.MaxNameLen + 1, 246, 250} {
		err := nodes.CheckName(strings.Repeat("é", n/2) + strings.Repeat("a", n%2))
		if !errors.Is(err, nodes.ErrBadName) || !strings.Contains(err.Error(), "names are at most 240 bytes") {
			t.Errorf("a name of %d bytes: %v", n, err)
		}
	}
}
