package nodes_test

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/nodes"
)

func TestExpand(t *testing.T) {
	t.Parallel()
	n := nodes.Node{Name: "w1", Host: "example.com", Index: 3}
	tests := []struct {
		tmpl, want string
	}{
		{"plain", "plain"},
		{"%n.pid", "w1.pid"},
		{"%N", "w1"},
		{"%h", "w1@example.com"},
		{"%p", "w1@example.com"},
		{"%d", "example.com"},
		{"port-80%i", "port-803"},
		{"/var/log/%n%I.log", "/var/log/w1.log"},
		{"100%%", "100%"},
		{"%%n", "%n"},
		{"%n%n", "w1w1"},
		{"a b 'c' %n", "a b 'c' w1"},
	}
	for _, tt := range tests {
		got, err := nodes.Expand(tt.tmpl, n)
		if err != nil || got != tt.want {
			t.Errorf("Expand(%q) = %q, %v; want %q", tt.tmpl, got, err, tt.want)
		}
	}
	for _, bad := range []string{"%x", "50%", "%", "%n%q"} {
		if _, err := nodes.Expand(bad, n); !errors.Is(err, nodes.ErrBadTemplate) || !strings.Contains(err.Error(), bad) {
			t.Errorf("Expand(%q) error = %v; want ErrBadTemplate naming the template", bad, err)
		}
	}
}

func TestSpecNodes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := nodes.Spec{
		Names:   []string{"w1", "w2", "img@other"},
		Host:    "h",
		RunDir:  dir,
		LogFile: "logs/%n.log",
		Dir:     "/srv",
		Command: []string{"worker", "--name=%h", "two words", "%i"},
	}
	got, err := spec.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	want := []nodes.Node{
		{Name: "w1", Host: "h", Index: 1, PidFile: filepath.Join(dir, "w1.pid"), LogFile: "/srv/logs/w1.log", Dir: "/srv", Command: []string{"worker", "--name=w1@h", "two words", "1"}},
		{Name: "w2", Host: "h", Index: 2, PidFile: filepath.Join(dir, "w2.pid"), LogFile: "/srv/logs/w2.log", Dir: "/srv", Command: []string{"worker", "--name=w2@h", "two words", "2"}},
		{Name: "img", Host: "other", Index: 3, PidFile: filepath.Join(dir, "img.pid"), LogFile: "/srv/logs/img.log", Dir: "/srv", Command: []string{"worker", "--name=img@other", "two words", "3"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Nodes() =\n%+v\nwant\n%+v", got, want)
	}
}

func TestSpecCount(t *testing.T) {
	t.Parallel()
	got, err := nodes.Spec{Names: []string{"3"}, Host: "h", RunDir: "/r"}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range got {
		names = append(names, n.FullName())
	}
	if want := []string{"celery1@h", "celery2@h", "celery3@h"}; !reflect.DeepEqual(names, want) {
		t.Errorf("names = %v; want %v", names, want)
	}
	got, err = nodes.Spec{Names: []string{"2"}, RangePrefix: "worker", RunDir: "/r"}.Nodes()
	if err != nil || got[1].Name != "worker2" || got[1].PidFile != "/r/worker2.pid" {
		t.Errorf("range prefix: %+v, %v", got, err)
	}
}

func TestSpecErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		spec nodes.Spec
		want error
		text string
	}{
		{nodes.Spec{}, nodes.ErrNoNodes, ""},
		{nodes.Spec{Names: []string{"w1", "w1"}}, nodes.ErrDuplicateName, `"w1"`},
		{nodes.Spec{Names: []string{"../x"}}, nodes.ErrBadName, `"../x"`},
		{nodes.Spec{Names: []string{".."}}, nodes.ErrBadName, `".."`},
		{nodes.Spec{Names: []string{""}}, nodes.ErrBadName, "empty"},
		{nodes.Spec{Names: []string{"a\x00b"}}, nodes.ErrBadName, ""},
		{nodes.Spec{Names: []string{"0"}}, nodes.ErrBadName, `"0"`},
		{nodes.Spec{Names: []string{"1000001"}}, nodes.ErrBadName, ""},
		{nodes.Spec{Names: []string{"w1"}, PidFile: "/x/%q.pid"}, nodes.ErrBadTemplate, "%q"},
		{nodes.Spec{Names: []string{"w1", "w2"}, PidFile: "/x/same.pid"}, nodes.ErrBadTemplate, "share the pidfile"},
		{nodes.Spec{Names: []string{"w1"}, Command: []string{"x", "%z"}}, nodes.ErrBadTemplate, "%z"},
	}
	for _, tt := range tests {
		tt.spec.RunDir = "/r"
		_, err := tt.spec.Nodes()
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.text) {
			t.Errorf("%+v: error %v; want %v containing %q", tt.spec.Names, err, tt.want, tt.text)
		}
	}
}
