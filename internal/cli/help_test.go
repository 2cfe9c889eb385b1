package cli

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
)

// Help, the app's and every verb's, fits 80 columns when not on a
// terminal; examples keep their indentation; every flag that takes a
// value names it (DURATION, not urfave/cli's "value").
func TestHelpFits(t *testing.T) {
	// Not "multi help VERB": after it, urfave/cli's manual page generator
	// recurses forever in the same process (its help command, one value
	// shared by every app, made a subcommand of itself), so TestManSynopsis
	// would hang; a real multi runs one command line. VERB --help prints
	// through the same printer.
	helps := map[string][]string{"multi --help": {"--help"}}
	for _, cmd := range newApp(nil, nil).VisibleCommands() {
		helps["multi "+cmd.Name+" --help"] = []string{cmd.Name, "--help"}
	}
	placeholder := regexp.MustCompile(`(?m)^\s+--[a-z-]+(, -[a-z])? value\b`)
	for what, args := range helps {
		code, out, _ := runCLI(t, args...)
		if code != exitOK || out == "" {
			t.Errorf("%s: exit %d, %q", what, code, out)
			continue
		}
		for _, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > 80 {
				t.Errorf("%s: a line of %d columns: %q", what, n, line)
			}
		}
		if m := placeholder.FindString(out); m != "" {
			t.Errorf("%s: a flag without a placeholder: %q", what, m)
		}
	}
	_, out, _ := runCLI(t, "start", "--help")
	for _, want := range []string{"\n      multi start w1 w2 w3 -- sleep 300\n", "\n   --lock-timeout DURATION  "} {
		if !strings.Contains(out, want) {
			t.Errorf("start --help lacks %q:\n%s", want, out)
		}
	}
}

// multi version is multi --version.
func TestVersionCommand(t *testing.T) {
	_, want, _ := runCLI(t, "--version")
	if code, out, errs := runCLI(t, "version"); code != exitOK || out != want || errs != "" {
		t.Errorf("version: exit %d, %q, %q; want %q", code, out, errs, want)
	}
	if code, out, errs := runCLI(t, "version", "x"); code != exitUsage || out != "" || !strings.HasPrefix(errs, `multi version: "x": version takes no arguments`) {
		t.Errorf("version x: exit %d, %q, %q; want a usage error", code, out, errs)
	}
}

// The manual page's SYNOPSIS lists every verb's usage line.
func TestManSynopsis(t *testing.T) {
	_, page, _ := runCLI(t, "man")
	start, end := strings.Index(page, "\n.SH SYNOPSIS\n"), strings.Index(page, "\n.SH DESCRIPTION\n")
	if start < 0 || end < start {
		t.Fatalf("man page without SYNOPSIS then DESCRIPTION:\n%.600s", page)
	}
	synopsis := page[start:end]
	for _, cmd := range newApp(nil, nil).VisibleCommands() {
		want := cmd.UsageText
		if want == "" {
			want = "multi " + cmd.Name
		}
		if !strings.Contains(synopsis, "\n"+roffText(want)+"\n") {
			t.Errorf("SYNOPSIS lacks %q:\n%s", want, synopsis)
		}
	}
}

// The status table fits the width, a long node name losing its middle to
// an ellipsis: 80 columns, or the terminal's when narrower.
func TestStatusTableLongName(t *testing.T) {
	t.Parallel()
	long := "celery-worker-for-the-billing-queue" // 35 characters
	for _, width := range []int{0, 80, 60} {
		var buf bytes.Buffer
		o := &output{w: &buf, tty: true, width: width}
		o.statusTable([]multi.Status{
			{Node: nodes.Node{Name: long, PidFile: "/r/" + long + ".pid", LogFile: "/r/" + long + ".log"},
				State: multi.StateRunning, PID: os.Getpid(), FilePID: os.Getpid()},
			{Node: nodes.Node{Name: "w2", PidFile: "/r/w2.pid", LogFile: "/r/w2.log"}, State: multi.StateStopped},
		}, "/r")
		limit := width
		if limit == 0 {
			limit = 80
		}
		for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
			if n := utf8.RuneCountInString(line); n > limit {
				t.Errorf("width %d: a line of %d columns: %q", width, n, line)
			}
		}
		if name := strings.Fields(strings.Split(buf.String(), "\n")[2])[0]; !strings.HasPrefix(name, "ce") || !strings.Contains(name, "…") || !strings.HasSuffix(name, "queue") {
			t.Errorf("width %d: the long name not shortened with an ellipsis, its end kept:\n%s", width, buf.String())
		}
	}
}

func TestNaturalCompare(t *testing.T) {
	t.Parallel()
	names := []string{"web10", "p2", "web1", "t1", "web2", "p1", "w01", "w1", "web", "a10b2", "a10b10", "a9"}
	sts := make([]multi.Status, len(names))
	for i, n := range names {
		sts[i].Node.Name = n
	}
	sortNatural(sts)
	var got []string
	for _, s := range sts {
		got = append(got, s.Node.Name)
	}
	if want := "a9 a10b2 a10b10 p1 p2 t1 w01 w1 web web1 web2 web10"; strings.Join(got, " ") != want {
		t.Errorf("sorted %q; want %q", strings.Join(got, " "), want)
	}
}

// status without names lists the recorded nodes in natural order, not by
// index first (p1 t1 web1 p2); --verbose adds each one's command.
func TestStatusNaturalOrderVerbose(t *testing.T) {
	dir := t.TempDir()
	for _, names := range [][]string{{"web10", "web2"}, {"p1", "p2"}, {"t1"}, {"web1"}} {
		ns, err := nodes.Spec{Names: names, RunDir: dir, Command: []string{"sleep", "300"}}.Nodes()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range ns {
			if err := record.Write(dir, n); err != nil {
				t.Fatal(err)
			}
		}
	}
	code, out, errs := runCLI(t, "status", "--rundir", dir)
	want := "p1: stopped\np2: stopped\nt1: stopped\nweb1: stopped\nweb2: stopped\nweb10: stopped\n"
	if code != exitStopped || out != want {
		t.Errorf("status: exit %d, %q, %q; want %q", code, out, errs, want)
	}
	code, out, _ = runCLI(t, "status", "p1", "--verbose", "--rundir", dir)
	if want := "p1: stopped  [sleep 300; pidfile " + dir + "/p1.pid, logfile " + dir + "/p1.log]\n"; code != exitStopped || out != want {
		t.Errorf("status p1 --verbose: exit %d, %q; want %q", code, out, want)
	}
	var buf bytes.Buffer
	o := &output{w: &buf, tty: true, verbose: true}
	o.statusTable([]multi.Status{{Node: nodes.Node{Name: "w1", PidFile: "/r/w1.pid", LogFile: "/r/w1.log", Command: []string{"sleep", "1 2"}, Dir: "/srv"}}}, "/r")
	if !strings.HasSuffix(buf.String(), "\nw1: sleep '1 2' (in /srv)\n") {
		t.Errorf("status table --verbose:\n%s\nwant each node's command under it", buf.String())
	}
}
