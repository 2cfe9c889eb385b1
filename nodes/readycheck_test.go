package nodes_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strconv"
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
	if c, err := nodes.ParseReady("http://127.0.0.1:8000/health"); err != nil || c.Kind != nodes.HTTP || c.String() != "http:http://127.0.0.1:8000/health" {
		t.Errorf("a URL alone: %v, %v; want an http: check", c, err)
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
	if err != nil || ns[0].Ready.String() != "tcp:127.0.0.1:801" || ns[1].Ready.Kind != nodes.Notify {
		t.Fatalf("%+v, %v", ns, err)
	}
	if _, err := (nodes.Spec{Names: []string{"w1"}, RunDir: "/run/x", Ready: "tcp:%n:80"}).Nodes(); !errors.Is(err, nodes.ErrBadReady) {
		t.Errorf("tcp:%%n:80: %v; want ErrBadReady", err)
	}
}

// A check is parsed once: its kind and target typed, its text in JSON
// (a bad one refused there too), and its kind says whether anyone can
// run it again against a running node (status, liveness).
func TestReadyCheckTyped(t *testing.T) {
	t.Parallel()
	probed := map[nodes.ReadyKind]bool{nodes.TCP: true, nodes.HTTP: true, nodes.Exec: true, nodes.File: true,
		nodes.Log: false, nodes.Notify: false, nodes.FD: false}
	for _, s := range []string{"tcp:127.0.0.1:80", "http:http://127.0.0.1:8000/health", "exec:test -e /x",
		"file:/run/x.ready", `log:ready\.`, "notify", "fd:5"} {
		c, err := nodes.ParseReady(s)
		if err != nil {
			t.Fatal(err)
		}
		if want, ok := probed[c.Kind]; !ok || c.Kind.Probe() != want {
			t.Errorf("%s: kind %q, Probe %v", s, c.Kind, c.Kind.Probe())
		}
		b, err := json.Marshal(struct{ Ready nodes.ReadyCheck }{c})
		if err != nil || string(b) != `{"Ready":`+strconv.Quote(s)+`}` {
			t.Errorf("%s as JSON: %s, %v", s, b, err)
		}
		var back struct{ Ready nodes.ReadyCheck }
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back.Ready, c) {
			t.Errorf("%s back from JSON: %+v, %v", s, back.Ready, err)
		}
	}
	if c, _ := nodes.ParseReady("fd:5"); c.FD() != 5 {
		t.Errorf("fd:5: FD %d", c.FD())
	}
	var none struct{ Ready nodes.ReadyCheck }
	if err := json.Unmarshal([]byte(`{"Ready":"ping:x"}`), &none); !errors.Is(err, nodes.ErrBadReady) {
		t.Errorf("a bad check in JSON: %v; want ErrBadReady", err)
	}
	if err := json.Unmarshal([]byte(`{"Ready":""}`), &none); err != nil || none.Ready.Kind != "" || none.Ready.String() != "" {
		t.Errorf("no check in JSON: %+v, %v", none.Ready, err)
	}
}

// An exec check is split into words as a shell splits it, and a
// %-letter expands inside its word: a name with a space is one argument.
func TestExecCheckWords(t *testing.T) {
	t.Parallel()
	ns, err := nodes.Spec{Names: []string{"w one", "w2"}, RunDir: "/run/x", Command: []string{"app"},
		Ready: `exec:check --name %n "a b" 'c d'`}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"check", "--name", "w one", "a b", "c d"}
	if got := ns[0].Ready.Args; !slices.Equal(got, want) {
		t.Errorf("w one's check: %q; want %q", got, want)
	}
	again, err := nodes.ParseReady(ns[0].Ready.String())
	if err != nil || !slices.Equal(again.Args, want) {
		t.Errorf("its text %q read back: %q, %v", ns[0].Ready, again.Args, err)
	}
	if _, err := nodes.ParseReady(`exec:sh -c 'unclosed`); !errors.Is(err, nodes.ErrBadReady) {
		t.Errorf("an unclosed quote: %v; want ErrBadReady", err)
	}
}
