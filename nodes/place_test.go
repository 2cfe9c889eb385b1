package nodes_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/nodes"
)

// celery 5 rejects its global options after the subcommand (celery worker
// -A proj): as celery multi does, a spec puts them right after the celery
// word, in the order given, and the rest at the end.
func TestCeleryGlobalOptionsPlaced(t *testing.T) {
	opt := func(name, value string) nodes.Option {
		return nodes.Option{Name: name, Value: value, HasValue: value != ""}
	}
	for _, tc := range []struct {
		command string
		opts    []nodes.Option
		want    string
	}{
		{"celery worker", []nodes.Option{opt("-A", "proj"), opt("-l", "INFO"), opt("-c", "4"), opt("-Q", "images")},
			"celery -A proj worker -l INFO -c 4 -Q images"},
		{"python3 -m celery worker", []nodes.Option{opt("--loglevel", "INFO"), opt("--app", "proj"), opt("-C", "")},
			"python3 -m celery --app=proj -C worker --loglevel=INFO"},
		{"sudo -u celery /venv/bin/celery beat", []nodes.Option{opt("-b", "redis://h/0"), opt("--workdir", "/srv")},
			"sudo -u celery /venv/bin/celery -b redis://h/0 --workdir=/srv beat"},
		{"celery -A proj worker", []nodes.Option{opt("--config", "cfg"), opt("-c", "2")},
			"celery --config=cfg -A proj worker -c 2"},
		// Not a celery command: options at the end, whatever they are.
		{"sleep 300", []nodes.Option{opt("-A", "proj")}, "sleep 300 -A proj"},
		{"celery", []nodes.Option{opt("-A", "proj")}, "celery -A proj"},
		{"./celery-worker worker", []nodes.Option{opt("-A", "proj")}, "./celery-worker worker -A proj"},
	} {
		ns, err := nodes.Spec{Names: []string{"w1"}, RunDir: "/run/x", Command: strings.Fields(tc.command), Options: tc.opts}.Nodes()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(ns[0].Command, " "); got != tc.want {
			t.Errorf("%s with %v:\n got %s\nwant %s", tc.command, tc.opts, got, tc.want)
		}
		// A restart's new options replace these, wherever they went.
		n := ns[0].WithOptions([]string{"--app=other", "-c", "8"})
		if got, want := strings.Join(n.Command, " "), again(tc.command, "--app=other", "-c", "8"); got != want {
			t.Errorf("%s, options replaced:\n got %s\nwant %s", tc.want, got, want)
		}
		if !slices.Equal(n.Options, []string{"--app=other", "-c", "8"}) {
			t.Errorf("options %q", n.Options)
		}
	}
}

// again is command with the options placed by hand: --app after the
// celery word of a celery command, the rest at its end.
func again(command string, opts ...string) string {
	switch command {
	case "celery worker":
		return "celery --app=other worker -c 8"
	case "python3 -m celery worker":
		return "python3 -m celery --app=other worker -c 8"
	case "sudo -u celery /venv/bin/celery beat":
		return "sudo -u celery /venv/bin/celery --app=other beat -c 8"
	case "celery -A proj worker":
		return "celery --app=other -A proj worker -c 8"
	}
	return command + " " + strings.Join(opts, " ")
}

// A record whose command simply ends in its options still gives its
// command back.
func TestWithOptionsTailRecord(t *testing.T) {
	n := nodes.Node{Command: []string{"celery", "worker", "-A", "proj"}, Options: []string{"-A", "proj"}}
	if got := strings.Join(n.WithOptions([]string{"-A", "p2", "-c", "2"}).Command, " "); got != "celery -A p2 worker -c 2" {
		t.Errorf("got %s; want celery -A p2 worker -c 2", got)
	}
	if got := strings.Join(n.WithOptions(nil).Command, " "); got != "celery worker" {
		t.Errorf("got %s; want celery worker", got)
	}
}
