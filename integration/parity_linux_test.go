package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/multi-launcher/multi/nodes/pidfile"
	"github.com/rogpeppe/go-internal/testscript"
)

// parity BG PIDFILE COMM [go] compares, field by field, what the process
// of the BG-th background command still running (the probe started from sh) and the holder of PIDFILE (the same
// probe started through multi) see of their surroundings, once both run
// COMM: every rlimit, the signal mask, ignored and caught signals, open
// descriptors, environment, working folder, umask, credentials, session,
// process group, controlling terminal, nice, scheduling, oom_score_adj and
// cgroup. A difference fails the script, except what README documents of
// a node: it leads its own session and process group with no terminal,
// starts with no signal blocked or ignored, has /dev/null as its standard
// input (standard output and error are its log), does not inherit its
// caller's other descriptors (this test's, and those named in
// $CALLER_FDS) but has the pidfile's locked one, and has
// $MULTI_NODE, $MULTI_PIDFILE and $MULTI_PIDFILE_FD. With go, the probe
// is a Go program, whose signal mask is its runtime's, and which catches
// the signals its caller ignored when started as a node.
func cmdParity(ts *testscript.TestScript, neg bool, args []string) {
	goProbe := len(args) == 4 && args[3] == "go"
	if neg || len(args) != 3 && !goProbe {
		ts.Fatalf("usage: parity bg pidfile comm [go]")
	}
	// Not a pid in an environment variable, which every later command
	// would have, and the base not.
	i, err := strconv.Atoi(args[0])
	bg := ts.BackgroundCmds()
	if err != nil || i < 0 || i >= len(bg) || bg[i].Process == nil {
		ts.Fatalf("parity: no background command %q", args[0])
	}
	base := bg[i].Process.Pid
	path, comm := ts.MkAbs(args[1]), args[2]
	deadline := time.Now().Add(30 * time.Second)
	node := 0
	for {
		info, err := pidfile.Inspect(path)
		ts.Check(err)
		if info.State == pidfile.Running && info.PID > 1 && procComm(info.PID) == comm && procComm(base) == comm {
			node = info.PID
			break
		}
		if time.Now().After(deadline) {
			ts.Fatalf("parity: %s held by pid %d (%s), base %d runs %s; want both to run %s",
				args[1], info.PID, procComm(info.PID), base, procComm(base), comm)
		}
		time.Sleep(time.Millisecond)
	}
	// Compared until they agree, or the deadline: a process just exec'd
	// may still have its dynamic loader's files open, a Go one may not
	// have set up its signal handlers yet. A real difference stays.
	var diff []string
	for {
		diff = parityDiff(ts, base, node, goProbe)
		if len(diff) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	sort.Strings(diff)
	for _, d := range diff {
		ts.Logf("parity: %s", d)
	}
	if len(diff) > 0 {
		ts.Fatalf("parity: the node (pid %d) can tell multi from a shell (pid %d): %d differences", node, base, len(diff))
	}
}

// parityDiff compares, once, what the node sees with what base (the same
// program started from sh) sees, but for what README documents of a node.
func parityDiff(ts *testscript.TestScript, base, node int, goProbe bool) []string {
	b, n := probeFields(ts, base), probeFields(ts, node)

	// What README documents of a node.
	want := map[string]string{
		"session": strconv.Itoa(node), "pgrp": strconv.Itoa(node),
		"tty_nr": "0", "tpgid": "-1",
		"SigBlk": "0000000000000000", "SigIgn": "0000000000000000",
		"fd.0": "/dev/null",
	}
	if goProbe {
		// A Go program's runtime sets its threads' masks as it goes:
		// its main thread's says nothing of how it was started.
		delete(want, "SigBlk")
		delete(b, "SigBlk")
		delete(n, "SigBlk")
		// And it catches what it finds not ignored: the signals the
		// caller ignored, which a node does not inherit, it may catch.
		ign, err1 := strconv.ParseUint(b["SigIgn"], 16, 64)
		bc, err2 := strconv.ParseUint(b["SigCgt"], 16, 64)
		nc, err3 := strconv.ParseUint(n["SigCgt"], 16, 64)
		if err1 == nil && err2 == nil && err3 == nil && bc&^ign == nc&^ign {
			delete(b, "SigCgt")
			delete(n, "SigCgt")
		}
	}
	for k, v := range want {
		if n[k] != v {
			return []string{fmt.Sprintf("node pid %d: %s is %q; README says %q", node, k, n[k], v)}
		}
	}
	if n["fd.1"] != n["fd.2"] {
		return []string{fmt.Sprintf("node pid %d: standard output %q and error %q differ", node, n["fd.1"], n["fd.2"])}
	}
	if fd := n["env."+pidfile.EnvPidfileFD]; fd != "" {
		if n["fd."+fd] != "<pidfile>" {
			return []string{fmt.Sprintf("node pid %d: $%s=%s names %q, not its pidfile", node, pidfile.EnvPidfileFD, fd, n["fd."+fd])}
		}
		delete(n, "fd."+fd)
	}
	// The caller's own descriptors (this test's, inherited from go test),
	// which sh passes on and a node does not get.
	for fd := range inheritedFDs(ts) {
		delete(b, "fd."+fd)
	}
	for _, fd := range strings.Fields(ts.Getenv("CALLER_FDS")) {
		delete(b, "fd."+fd)
	}
	for _, m := range []map[string]string{b, n} {
		for k := range want {
			delete(m, k)
		}
		for _, k := range []string{"fd.1", "fd.2", "ppid", "env.MULTI_NODE", "env." + pidfile.EnvPidfile, "env." + pidfile.EnvPidfileFD} {
			delete(m, k)
		}
	}
	// The node's own descriptors by what they are, not by number: a Go
	// node's runtime takes the lowest free ones.
	for _, m := range []map[string]string{b, n} {
		var fds []string
		for k, v := range m {
			if strings.HasPrefix(k, "fd.") {
				fds = append(fds, v)
				delete(m, k)
			}
		}
		sort.Strings(fds)
		m["fds"] = strings.Join(fds, " ")
	}
	keys := map[string]bool{}
	for k := range b {
		keys[k] = true
	}
	for k := range n {
		keys[k] = true
	}
	var diff []string
	for k := range keys {
		if b[k] != n[k] {
			diff = append(diff, fmt.Sprintf("%s: from sh %q, through multi %q", k, b[k], n[k]))
		}
	}
	return diff
}

// procComm is the command name of pid, "" if it cannot be read.
func procComm(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// probeFields reads, from /proc, what pid sees of its surroundings, as
// key=value: "limit.NAME" (soft and hard), "fd.N" (a descriptor's target,
// its own pidfile as "<pidfile>"), "env.NAME", and single fields.
func probeFields(ts *testscript.TestScript, pid int) map[string]string {
	dir := fmt.Sprintf("/proc/%d/", pid)
	read := func(name string) string {
		b, err := os.ReadFile(dir + name)
		ts.Check(err)
		return string(b)
	}
	f := map[string]string{}
	for _, l := range strings.Split(read("limits"), "\n")[1:] {
		if len(l) < 26 {
			continue
		}
		// "Max open files            1024                 20000                files"
		name, vals := strings.TrimSpace(l[:26]), strings.Fields(l[26:])
		if len(vals) >= 2 {
			f["limit."+name] = vals[0] + " " + vals[1]
		}
	}
	for _, l := range strings.Split(read("status"), "\n") {
		k, v, _ := strings.Cut(l, ":")
		switch k {
		case "Umask", "SigBlk", "SigIgn", "SigCgt", "Uid", "Gid", "Groups", "NoNewPrivs", "Seccomp",
			"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "Cpus_allowed_list", "Mems_allowed_list":
			f[k] = strings.Join(strings.Fields(v), " ")
		}
	}
	env := map[string]string{}
	for _, kv := range strings.Split(read("environ"), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
			f["env."+k] = v
		}
	}
	ents, err := os.ReadDir(dir + "fd")
	ts.Check(err)
	for _, e := range ents {
		t, err := os.Readlink(dir + "fd/" + e.Name())
		if err != nil {
			continue // closed meanwhile
		}
		if env[pidfile.EnvPidfile] != "" && t == env[pidfile.EnvPidfile] {
			t = "<pidfile>"
		} else if i := strings.Index(t, ":["); i > 0 {
			t = t[:i] // pipe:[123], socket:[...]: the kind, not the inode
		}
		f["fd."+e.Name()] = t
	}
	cwd, err := os.Readlink(dir + "cwd")
	ts.Check(err)
	f["cwd"] = cwd
	stat := read("stat")
	fields := strings.Fields(stat[strings.LastIndexByte(stat, ')')+2:])
	// Fields from 3 on (proc(5)): ppid 4, pgrp 5, session 6, tty_nr 7,
	// tpgid 8, nice 19, rt_priority 40, policy 41.
	for name, i := range map[string]int{"ppid": 4, "pgrp": 5, "session": 6, "tty_nr": 7, "tpgid": 8, "nice": 19, "rt_priority": 40, "policy": 41} {
		if i-3 < len(fields) {
			f[name] = fields[i-3]
		}
	}
	f["oom_score_adj"] = strings.TrimSpace(read("oom_score_adj"))
	// A node's own cgroup v2 folder (containment cgroup, README) is the
	// one difference its cgroup may have: multi.<id>/<node> under the
	// caller's.
	f["cgroup"] = ownCgroup.ReplaceAllString(strings.TrimSpace(read("cgroup")), "")
	if strings.HasSuffix(f["cgroup"], "0::") {
		f["cgroup"] += "/" // the node's under the root cgroup
	}
	if b, err := os.ReadFile(dir + "personality"); err == nil {
		f["personality"] = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "attr", "current")); err == nil {
		f["security"] = strings.TrimSpace(string(b))
	}
	return f
}

// inheritedFDs are the descriptors of this process that its children
// inherit (not close-on-exec), from 3 on.
func inheritedFDs(ts *testscript.TestScript) map[string]bool {
	ents, err := os.ReadDir("/proc/self/fdinfo")
	ts.Check(err)
	out := map[string]bool{}
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err != nil || n < 3 {
			continue
		}
		b, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue // the directory's own descriptor, say
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "flags:"); ok {
				if fl, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64); err == nil && fl&syscall.O_CLOEXEC == 0 {
					out[e.Name()] = true
				}
			}
		}
	}
	return out
}

// ownCgroup is the part of a node's cgroup v2 path that multi adds.
var ownCgroup = regexp.MustCompile(`/multi\.[0-9a-f]{16}/[^/\n]+$`)
