package cli

import (
	"strings"
	"testing"

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
		if err := nodes.WriteRecord(dir, n); err != nil {
			t.Fatal(err)
		}
	}
	code, out, _ := runCLI(t, "stop", "w1", "--generate-bash-completion")
	if code != exitOK || out != "w2\n" {
		t.Errorf("stop w1 <TAB>: exit %d, %q; want w2", code, out)
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
