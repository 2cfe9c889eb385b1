package nodes_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/nodes"
)

func TestParseNeed(t *testing.T) {
	for in, want := range map[string]nodes.Need{
		"db":           {Name: "db", Cond: nodes.AfterStarted},
		"db:ready":     {Name: "db", Cond: nodes.AfterReady},
		"migrate:done": {Name: "migrate", Cond: nodes.AfterDone},
	} {
		got, err := nodes.ParseNeed(in)
		if err != nil || got != want || got.String() != want.Name+":"+string(want.Cond) {
			t.Errorf("ParseNeed(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"db:up", "", ":ready", "a/b:ready"} {
		if _, err := nodes.ParseNeed(in); !errors.Is(err, nodes.ErrBadNeed) {
			t.Errorf("ParseNeed(%q): %v; want ErrBadNeed", in, err)
		}
	}
}

// systemd's EnvironmentFile= syntax: comments, export, quotes, escapes,
// continued lines.
func TestReadEnvFile(t *testing.T) {
	in := `# a comment
; another

export A=1
B = two words
C='single $quoted \n'
D="double \"quoted\" \$HOME\nline"
E=con\
tinued
F=
`
	got, err := nodes.ReadEnvFile(strings.NewReader(in), "x.env")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"A=1", "B=two words", `C=single $quoted \n`, "D=double \"quoted\" $HOME\nline", "E=continued", "F="}
	if !slices.Equal(got, want) {
		t.Errorf("ReadEnvFile = %q; want %q", got, want)
	}
	for _, bad := range []string{"no equals\n", "1A=x\n", "A-B=x\n", "=x\n"} {
		if _, err := nodes.ReadEnvFile(strings.NewReader(bad), "x.env"); err == nil || !strings.Contains(err.Error(), "x.env, line 1") {
			t.Errorf("ReadEnvFile(%q): %v; want an error naming the file and line", bad, err)
		}
	}
	if _, err := nodes.ReadEnvFile(strings.NewReader(strings.Repeat("A=x\n", 1<<19)), "big.env"); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a 2 MiB env file: %v", err)
	}
}
