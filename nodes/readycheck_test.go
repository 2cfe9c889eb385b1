package nodes_test

import (
	"errors"
	"testing"

	"github.com/multi-launcher/multi/nodes"
)

func TestParseReady(t *testing.T) {
	t.Parallel()
	good := []string{"tcp:127.0.0.1:80", "tcp:[::1]:8080", "tcp:localhost:1", "http:http://127.0.0.1:8000/health",
		"http:http://localhost/", "exec:test -e /x", "file:/run/x.ready", `log:celery@\S+ ready\.`, "notify", "fd:3", "fd:1023"}
	for _, s := range good {
		if c, err := nodes.ParseReady(s); err != nil || c.String() != s {
			t.Errorf("ParseReady(%q) = %v, %v", s, c, err)
		}
	}
	bad := []string{"", "ping", "tcp:", "tcp:127.0.0.1", "tcp:127.0.0.1:0", "tcp:127.0.0.1:70000", "tcp:::1:80",
		"tcp:example.com:80", "http:https://127.0.0.1/", "http:127.0.0.1", "http:http://example.com/", "exec:", "exec:  ",
		"file:relative", "file:/", "log:", "log:(", "notify:x", "fd:2", "fd:1024", "fd:x"}
	for _, s := range bad {
		if _, err := nodes.ParseReady(s); !errors.Is(err, nodes.ErrBadReady) {
			t.Errorf("ParseReady(%q): %v; want ErrBadReady", s, err)
		}
	}
}

// A check's %-letters are expanded per node, and checked then.
func TestSpecReady(t *testing.T) {
	t.Parallel()
	ns, err := nodes.Spec{Names: []string{"2"}, RunDir: "/run/x", Command: []string{"app"}, Ready: "tcp:127.0.0.1:80%i",
		NodeFiles: []nodes.Option{{Name: "ready", Value: "notify", HasValue: true, Scope: "2"}}}.Nodes()
	if err != nil || ns[0].Ready != "tcp:127.0.0.1:801" || ns[1].Ready != "notify" {
		t.Fatalf("%+v, %v", ns, err)
	}
	if _, err := (nodes.Spec{Names: []string{"w1"}, RunDir: "/run/x", Ready: "tcp:%n:80"}).Nodes(); !errors.Is(err, nodes.ErrBadReady) {
		t.Errorf("tcp:%%n:80: %v; want ErrBadReady", err)
	}
}
