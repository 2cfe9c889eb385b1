package celery

import (
	"slices"
	"strings"
	"testing"
)

// A restart's new options replace those placed before, wherever they
// went; the base comes back whole.
func TestBaseUndoesPlace(t *testing.T) {
	for _, tc := range []struct{ base, opts, newOpts, want string }{
		{"celery worker", "-A proj -l INFO -c 4", "--app=other -c 8", "celery --app=other worker -c 8"},
		{"python3 -m celery worker", "--loglevel=INFO --app=proj -C", "--app=other -c 8", "python3 -m celery --app=other worker -c 8"},
		{"sudo -u celery /venv/bin/celery beat", "-b redis://h/0 --workdir=/srv", "-c 8", "sudo -u celery /venv/bin/celery beat -c 8"},
		{"celery -A proj worker", "--config=cfg -c 2", "-A p2", "celery -A p2 -A proj worker"},
		{"sleep 300", "-A proj", "-A other", "sleep 300 -A other"},
		{"celery", "-A proj", "-A other", "celery -A other"},
	} {
		base, opts := strings.Fields(tc.base), strings.Fields(tc.opts)
		command := Place(base, opts)
		if got := Base(command, opts); !slices.Equal(got, base) {
			t.Errorf("Base(%q, %q) = %q; want %q", command, opts, got, base)
		}
		if got := strings.Join(Place(Base(command, opts), strings.Fields(tc.newOpts)), " "); got != tc.want {
			t.Errorf("%s with %s, then %s: %s; want %s", tc.base, tc.opts, tc.newOpts, got, tc.want)
		}
	}
}

// A command that simply ends in its options (written so by hand, or by
// a multi that did not place them) still gives its base back.
func TestBaseOfTailCommand(t *testing.T) {
	command, opts := []string{"celery", "worker", "-A", "proj"}, []string{"-A", "proj"}
	if got := Base(command, opts); !slices.Equal(got, []string{"celery", "worker"}) {
		t.Errorf("Base = %q; want celery worker", got)
	}
}

func TestIs(t *testing.T) {
	for command, want := range map[string]bool{
		"celery worker": true, "/venv/bin/celery -A p beat": true, "python3 -m celery events": true,
		"celery": false, "sleep 300": false, "./celery-worker worker": false, "celery inspect ping": false,
	} {
		if got := Is(strings.Fields(command)); got != want {
			t.Errorf("Is(%s) = %v; want %v", command, got, want)
		}
	}
}
