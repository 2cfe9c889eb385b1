package cli_test

import (
	"errors"
	"reflect"
	"strconv"
	"testing"

	"github.com/multi-launcher/multi/internal/cli"
	"github.com/multi-launcher/multi/nodes"
)

func TestParser(t *testing.T) {
	t.Parallel()
	p := cli.Parser{
		Flags:   map[string]bool{"pidfile": true, "json": false},
		PerNode: map[string]bool{"pidfile": true},
		Signal:  func(s string) bool { return s == "KILL" || s == "9" },
	}
	tests := []struct {
		args []string
		want cli.Args
	}{
		{[]string{"w1", "w2"}, cli.Args{Names: []string{"w1", "w2"}}},
		{[]string{"w1", "--pidfile=/r/%n.pid", "w2"}, cli.Args{Names: []string{"w1", "w2"}, Flags: []nodes.Option{{Name: "pidfile", Value: "/r/%n.pid", HasValue: true}}}},
		{[]string{"--pidfile", "x", "w1"}, cli.Args{Names: []string{"w1"}, Flags: []nodes.Option{{Name: "pidfile", Value: "x", HasValue: true}}}},
		{[]string{"w1", "--json"}, cli.Args{Names: []string{"w1"}, Flags: []nodes.Option{{Name: "json", Value: "true", HasValue: true}}}},
		{[]string{"w1", "-KILL"}, cli.Args{Names: []string{"w1"}, Signal: "KILL"}},
		{[]string{"-9", "w1"}, cli.Args{Names: []string{"w1"}, Signal: "9"}},
		{[]string{"w1", "--", "sh", "-c", "echo 'a b'", "--pidfile=no"}, cli.Args{Names: []string{"w1"},
			Command: []string{"sh", "-c", "echo 'a b'", "--pidfile=no"}, HasCommand: true}},
		{[]string{"w1", "--"}, cli.Args{Names: []string{"w1"}, Command: []string{}, HasCommand: true}},
		{[]string{"w1", "--pidfile:w1=/a", "--pidfile:2", "/b"}, cli.Args{Names: []string{"w1"},
			NodeFlags: []nodes.Option{{Name: "pidfile", Value: "/a", HasValue: true, Scope: "w1"}, {Name: "pidfile", Value: "/b", HasValue: true, Scope: "2"}}}},
	}
	if a, err := p.Parse([]string{"--pidfile=a", "w1", "--pidfile", "b"}); err != nil || len(a.Flags) != 2 || a.Flag("pidfile") != "b" || a.Flag("json") != "" {
		t.Errorf("a flag given twice: %+v, %v; want both, in order, the last one the value", a, err)
	}
	for _, tt := range tests {
		got, err := p.Parse(tt.args)
		if err != nil || !reflect.DeepEqual(*got, tt.want) {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tt.args, got, err, tt.want)
		}
	}
	for _, bad := range [][]string{{"-"}, {"--bogus"}, {"--json=yes"}, {"--pidfile"}, {"-HUP"}, {"-KILL", "-9"}, {"-c"},
		{"--json:1"}, {"--pidfile:=x"}, {"--pidfile:1:2=x"}, {"w1", "--pidfile", "--"}} {
		if _, err := p.Parse(bad); !errors.Is(err, cli.ErrUsage) {
			t.Errorf("Parse(%q) error = %v; want ErrUsage", bad, err)
		}
	}
	if _, err := p.Parse([]string{"w1", "--help"}); !errors.Is(err, cli.ErrHelp) {
		t.Errorf("--help: %v; want ErrHelp", err)
	}
	if _, err := (cli.Parser{}).Parse([]string{"-KILL"}); !errors.Is(err, cli.ErrUsage) {
		t.Errorf("signal without Signal func: %v; want ErrUsage", err)
	}
}

// BenchmarkParse1000 parses a command line of 1000 node names, flags and a
// command.
func BenchmarkParse1000(b *testing.B) {
	args := []string{"--rundir=/run/multi", "--pidfile", "/run/multi/%n.pid"}
	for i := range 1000 {
		args = append(args, "w"+strconv.Itoa(i+1))
	}
	args = append(args, "-TERM", "--", "sleep", "300")
	p := cli.Parser{Flags: map[string]bool{"rundir": true, "pidfile": true, "logfile": true, "json": false},
		Signal: func(s string) bool { return s == "TERM" }}
	b.ReportAllocs()
	for range b.N {
		if a, err := p.Parse(args); err != nil || len(a.Names) != 1000 {
			b.Fatal(err)
		}
	}
}
