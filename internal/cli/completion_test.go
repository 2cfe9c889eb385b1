package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes"
)

func TestCompletionScripts(t *testing.T) {
	for shell, want := range map[string]string{"bash": bashCompletion, "zsh": zshCompletion} {
		code, out, errs := runCLI(t, "completion", shell)
		if code != exitOK || out != want || errs != "" {
			t.Errorf("completion %s: exit %d, %q, %q", shell, code, out, errs)
		}
	}
	if !strings.Contains(bashCompletion, "complete -o bashdefault -o default -F _multi_complete multi") ||
		!strings.HasPrefix(zshCompletion, "#compdef multi\n") {
		t.Error("completion scripts do not register for multi")
	}
	if code, out, _ := runCLI(t, "completion"); code != exitUsage || out != "" {
		t.Errorf("completion without a shell: exit %d, %q", code, out)
	}
}

func TestManPage(t *testing.T) {
	code, out, errs := runCLI(t, "man")
	if code != exitOK || errs != "" || !strings.Contains(out, ".SH NAME") || !strings.Contains(out, "stopwait") {
		t.Errorf("man: exit %d, stderr %q, page:\n%.300s", code, errs, out)
	}
	for _, want := range []string{".SH EXIT STATUS\n", ".SH ENVIRONMENT\n", ".SH FILES\n", ".SH EXAMPLES\n",
		".SH TEMPLATE LETTERS\n", "MULTI_RUNDIR", ".B 130\n", "%n", "NAME.node"} {
		if !strings.Contains(out, want) {
			t.Errorf("man page lacks %q", want)
		}
	}
	// and --help shows that there is one.
	if _, out, _ := runCLI(t, "--help"); !strings.Contains(out, "\n   man ") {
		t.Errorf("--help does not list man:\n%s", out)
	}
}

// Completion offers the recorded nodes not yet given, or the verb's
// flags after a dash.
func TestComplete(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("MULTI_RUNDIR", dir)
	ns, err := nodes.Spec{Names: []string{"w1", "w2"}, RunDir: dir, Command: []string{"sleep", "1"}}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		if err := record.Write(dir, n); err != nil {
			t.Fatal(err)
		}
	}
	code, out, _ := runCLI(t, "stop", "w1", "--generate-bash-completion")
	if code != exitOK || out != "w2\n" {
		t.Errorf("stop w1 <TAB>: exit %d, %q; want w2", code, out)
	}
	// Another rundir's records, however bash splits --rundir=DIR.
	other := t.TempDir()
	if err := record.Write(other, nodes.Node{Name: "x9", PidFile: filepath.Join(other, "x9.pid"), LogFile: filepath.Join(other, "x9.log"), Command: []string{"sleep", "1"}}); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--rundir=" + other}, {"--rundir", "=", other}, {"--rundir", other}} {
		code, out, _ = runCLI(t, append(append([]string{"stop"}, args...), "--generate-bash-completion")...)
		if code != exitOK || out != "x9\n" {
			t.Errorf("stop %q <TAB>: exit %d, %q; want x9", args, code, out)
		}
	}
	if _, out, _ = runCLI(t, "stop", "--group", "--generate-bash-completion"); out != "w1\nw2\n" {
		t.Errorf("stop --group <TAB>: %q; want the nodes", out)
	}
	if _, out, _ = runCLI(t, "stop", "--rundir", "--generate-bash-completion"); out != "" {
		t.Errorf("stop --rundir <TAB>: %q; want nothing (the shell completes a folder)", out)
	}
	// multi help <TAB>: the commands.
	code, out, _ = runCLI(t, "help", "--generate-bash-completion")
	if cmds := strings.Fields(out); code != exitOK || !contains(cmds, "stopwait") || !contains(cmds, "forget") || !contains(cmds, "man") {
		t.Errorf("help <TAB>: exit %d, %q; want the commands", code, out)
	}
	code, out, _ = runCLI(t, "stopwait", "-", "--generate-bash-completion")
	flags := strings.Fields(out)
	if code != exitOK || !contains(flags, "--timeout") || !contains(flags, "--wait") || !contains(flags, "--quiet") || contains(flags, "--json") {
		t.Errorf("stopwait -<TAB>: exit %d, %q", code, out)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
