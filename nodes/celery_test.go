package nodes_test

import (
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
	}
}
