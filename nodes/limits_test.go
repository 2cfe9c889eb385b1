package nodes_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/nodes"
)

// Each limit takes what a user gives (systemd's forms) and keeps it in
// one form, which the record holds and apply compares; anything else is
// ErrBadLimit, saying what the value may be.
func TestLimitsSet(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, in, want string }{
		{"nofile", "64", "64"},
		{"nofile", "1024:4096", "1024:4096"},
		{"nofile", "64:64", "64"},
		{"nofile", " 64 ", "64"},
		{"nofile", "infinity", "infinity"},
		{"nofile", "1024:infinity", "1024:infinity"},
		{"nproc", "0", "0"},
		{"core", "0", "0"},
		{"core", "1M", "1048576"},
		{"as", "512M", "536870912"},
		{"as", "2G", "2147483648"},
		{"as", "1g:2G", "1073741824:2147483648"},
		{"as", "1024k", "1048576"},
		{"memory_max", "512M", "536870912"},
		{"memory_max", "max", "max"},
		{"memory_high", "1T", "1099511627776"},
		{"cpu_max", "50%", "50000 100000"},
		{"cpu_max", "200%", "200000 100000"},
		{"cpu_max", "max", "max 100000"},
		{"cpu_max", "25000", "25000 100000"},
		{"cpu_max", "25000 50000", "25000 50000"},
		{"pids_max", "64", "64"},
		{"pids_max", "max", "max"},
		{"log_max_size", "1M", "1048576"},
		{"log_max_size", "4096", "4096"},
		{"log_keep", "0", "0"},
		{"log_keep", "1000", "1000"},
	} {
		var l nodes.Limits
		if err := l.Set(c.name, c.in); err != nil || l.Get(c.name) != c.want {
			t.Errorf("Set(%s, %q): %q, %v; want %q", c.name, c.in, l.Get(c.name), err, c.want)
		}
	}
	for _, c := range []struct{ name, in, want string }{
		{"nofile", "abc", `want N or SOFT:HARD (numbers, or infinity), not "abc"`},
		{"nofile", "-1", `not "-1"`},
		{"nofile", "", `not ""`},
		{"nofile", "64M", `not "64M"`},
		{"nofile", "128:64", `soft limit 128 above the hard limit 64 in "128:64"`},
		{"nofile", "infinity:64", "soft limit infinity above the hard limit 64"},
		{"nofile", "1:2:3", `not "1:2:3"`},
		{"nofile", "18446744073709551615", "not"},
		{"nproc", "1.5", `not "1.5"`},
		{"as", "1X", `want BYTES or SOFT:HARD`},
		{"as", "-1G", `not "-1G"`},
		{"as", "99999999999T", "not"},
		{"memory_max", "lots", `want bytes (with K, M, G or T: 512M) or max, not "lots"`},
		{"memory_max", "-1", "not"},
		{"cpu_max", "0%", "want a share of one CPU"},
		{"cpu_max", "10", "the quota of \"10\" is 1000 microseconds or more"},
		{"cpu_max", "50000 10", "the period of \"50000 10\" is 1000 to 1000000 microseconds"},
		{"cpu_max", "a b c", "want a share of one CPU"},
		{"pids_max", "0", "want a count of tasks from 1, or max"},
		{"pids_max", "-5", "want a count of tasks from 1"},
		{"log_max_size", "4095", "want bytes from 4K"},
		{"log_max_size", "max", "want bytes from 4K"},
		{"log_keep", "1001", "want a count of rotated files from 0 to 1000"},
		{"log_keep", "-1", "want a count of rotated files"},
		{"stack", "8M", `no limit "stack"`},
	} {
		var l nodes.Limits
		err := l.Set(c.name, c.in)
		if !errors.Is(err, nodes.ErrBadLimit) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Set(%s, %q): %v; want ErrBadLimit: %s", c.name, c.in, err, c.want)
		}
		if l != (nodes.Limits{}) {
			t.Errorf("Set(%s, %q) set %+v; want nothing", c.name, c.in, l)
		}
	}
}

// Rlimits lists the rlimits parsed, in their order, without the cgroup
// limits; Cgroup says whether there are any of those.
func TestLimitsRlimits(t *testing.T) {
	t.Parallel()
	l := nodes.Limits{AS: "1073741824", NOFILE: "64:1024", MemoryMax: "max"}
	rs, err := l.Rlimits()
	if err != nil || len(rs) != 2 || rs[0] != (nodes.Rlimit{Name: "nofile", Soft: 64, Hard: 1024}) ||
		rs[1] != (nodes.Rlimit{Name: "as", Soft: 1 << 30, Hard: 1 << 30}) {
		t.Errorf("Rlimits: %+v, %v", rs, err)
	}
	if !l.Cgroup() || (nodes.Limits{NOFILE: "1"}).Cgroup() {
		t.Error("Cgroup: wrong")
	}
	if _, err := (nodes.Limits{NPROC: "many"}).Rlimits(); !errors.Is(err, nodes.ErrBadLimit) || !strings.HasPrefix(err.Error(), "--limit-nproc=many: ") {
		t.Errorf("Rlimits of a bad record's value: %v; want ErrBadLimit naming --limit-nproc", err)
	}
	if rs[0].String() != "64:1024" || (nodes.Rlimit{Soft: nodes.Infinity, Hard: nodes.Infinity}).String() != "infinity" {
		t.Errorf("String: %s", rs[0])
	}
	for _, name := range nodes.LimitNames {
		if f := nodes.LimitFlag(name); !strings.HasPrefix(f, "--") || strings.Contains(f, "_") {
			t.Errorf("LimitFlag(%s) = %s", name, f)
		}
	}
}

// A Spec's limits reach every node, in their kept form; a bad one is an
// error naming its flag.
func TestSpecLimits(t *testing.T) {
	t.Parallel()
	ns, err := nodes.Spec{Names: []string{"2"}, Command: []string{"app"}, RunDir: t.TempDir(),
		Limits: nodes.Limits{AS: "1G", CPUMax: "50%"}}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		if n.Limits != (nodes.Limits{AS: "1073741824", CPUMax: "50000 100000"}) {
			t.Errorf("%s: %+v", n, n.Limits)
		}
	}
	_, err = nodes.Spec{Names: []string{"w1"}, Command: []string{"app"}, RunDir: t.TempDir(),
		Limits: nodes.Limits{PidsMax: "none"}}.Nodes()
	if !errors.Is(err, nodes.ErrBadLimit) || !strings.HasPrefix(err.Error(), "--pids-max: ") {
		t.Errorf("Spec with pids_max none: %v; want ErrBadLimit naming --pids-max", err)
	}
}

// LogRotation gives the size and the kept count a Limits holds, with the
// default count when none is given; a --log-keep without a size is
// refused, naming the flag.
func TestLogRotation(t *testing.T) {
	var l nodes.Limits
	if _, _, ok := l.LogRotation(); ok {
		t.Error("no size: a rotation")
	}
	l.Set("log_max_size", "1M")
	if size, keep, ok := l.LogRotation(); !ok || size != 1<<20 || keep != nodes.DefaultLogKeep {
		t.Errorf("1M: %d, %d, %v", size, keep, ok)
	}
	l.Set("log_keep", "0")
	if _, keep, ok := l.LogRotation(); !ok || keep != 0 {
		t.Errorf("keep 0: %d, %v", keep, ok)
	}
	_, err := nodes.Spec{Names: []string{"w1"}, Command: []string{"x"}, Limits: nodes.Limits{LogKeep: "2"}}.Nodes()
	if !errors.Is(err, nodes.ErrBadLimit) || !strings.Contains(err.Error(), "--log-keep") {
		t.Errorf("--log-keep alone: %v", err)
	}
}
