//go:build unix

package integration

import (
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

// The demo shows its commands quoted so that pasting one runs exactly
// what the demo ran: its quote function's output, read back by bash, is
// the same words.
func TestDemoQuotes(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../testdata/demo.sh")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	i := strings.Index(src, "\nquote() {")
	j := strings.Index(src[i+1:], "\n}\n")
	if i < 0 || j < 0 {
		t.Fatal("no quote() function in testdata/demo.sh")
	}
	fn := src[i+1 : i+1+j+3]
	words := []string{"multi", "start", "w1", "--", "sh", "-c", `echo "%n up as pid $$"; trap 'x' TERM`, "", "a b", `\`, "it's", "-c:1-3", "--x=1"}
	script := fn + `line=$(quote "$@"); set --; eval "set -- $line" || exit 1; printf '%s\0' "$@"`
	out, err := exec.Command("bash", append([]string{"-c", script, "bash"}, words...)...).Output()
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if !reflect.DeepEqual(got, words) {
		t.Errorf("quoted and read back: %q; want %q", got, words)
	}
	line, _ := exec.Command("bash", "-c", fn+`quote "$@"`, "bash", "multi", "status", "--json", "w2").Output()
	if string(line) != "multi status --json w2" {
		t.Errorf("plain words quoted: %q", line)
	}
}

// make demo, README's main job, runs to its end: it failed once unseen,
// when a start of a running node with another command became FAILED.
func TestDemoRuns(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	cmd := exec.Command("bash", "../testdata/demo.sh", bin)
	cmd.Env = append(os.Environ(), "MULTI_RUNDIR=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash testdata/demo.sh: %v\n%s", err, out)
	}
	for _, want := range []string{"w1: started (pid ", "w1: already running (pid ", "w3: stopped (pid "} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the demo's output has no %q:\n%s", want, out)
		}
	}
}
