package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/multi-launcher/multi/nodes"
)

// writeProject writes a project file named name holding text in a fresh
// folder, and returns the folder.
func writeProject(t *testing.T, name, text string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The file's groups become Specs in its order, every key in its place,
// paths relative to the project's folder.
func TestProjectFileKeys(t *testing.T) {
	t.Parallel()
	dir := writeProject(t, projectFileName, `
rundir = "run"
settle = "0"
ready_timeout = "30s"
stop_timeout = 10
on_exit = "restart"
backoff = "2s"
restart_window = "5m"
max_restarts = 4

[group.web]
command = "python3 -m http.server 80%i"
ready = "tcp:127.0.0.1:80%i"
after = ["db:ready"]
env = { B = "2", A = "1" }
env_file = ".env"
kill_mode = "process"
limit_nofile = 4096
limit_nproc = "64:128"
limit_core = 0
limit_as = "1G"
memory_max = "512M"
memory_high = 268435456
cpu_max = "50%"
pids_max = "max"
log_max_size = "10M"
log_keep = 2

[group.db]
command = ["postgres", "-D", "data dir"]
ready_for = { db = "tcp:127.0.0.1:5432" }
pidfile_for = { db = "pids/db.pid" }

[group.workers]
command = "celery -A proj worker"
count = 3
options = ["-l", "INFO", "-c:1-2", "4"]
dir = "app"
`)
	pf, err := findProjectFile(filepath.Join(dir))
	if err != nil {
		t.Fatal(err)
	}
	if pf.RunDir != filepath.Join(dir, "run") || pf.Settle != -1 || pf.ReadyTimeout != 30*time.Second || pf.StopTimeout != 10*time.Second || pf.OnExit != "restart" ||
		pf.Backoff != 2*time.Second || pf.RestartWindow != 5*time.Minute || pf.MaxRestarts != 4 {
		t.Errorf("project keys: %+v", pf)
	}
	var names []string
	for _, g := range pf.Groups {
		names = append(names, g.Name)
	}
	if !slices.Equal(names, []string{"web", "db", "workers"}) {
		t.Fatalf("groups %v: want the file's order", names)
	}
	web, db, w := pf.Groups[0], pf.Groups[1].Spec, pf.Groups[2].Spec
	if web.KillMode != "process" || !slices.Equal(web.Spec.After, []string{"db:ready"}) || !slices.Equal(web.Spec.Env, []string{"A=1", "B=2"}) ||
		!slices.Equal(web.Spec.EnvFiles, []string{filepath.Join(dir, ".env")}) || web.Spec.Names[0] != "web" || web.Spec.Group != "web" {
		t.Errorf("web: %+v", web)
	}
	if want := (nodes.Limits{NOFILE: "4096", NPROC: "64:128", Core: "0", AS: "1073741824", MemoryMax: "536870912",
		MemoryHigh: "268435456", CPUMax: "50000 100000", PidsMax: "max", LogMaxSize: "10485760", LogKeep: "2"}); web.Spec.Limits != want {
		t.Errorf("web's limits %+v; want %+v", web.Spec.Limits, want)
	}
	if db.Limits != (nodes.Limits{}) {
		t.Errorf("db's limits %+v; want none", db.Limits)
	}
	if !slices.Equal(db.Command, []string{"postgres", "-D", "data dir"}) {
		t.Errorf("db command %q", db.Command)
	}
	dbs, err := db.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	if dbs[0].Ready.String() != "tcp:127.0.0.1:5432" || dbs[0].PidFile != filepath.Join(dir, "pids", "db.pid") {
		t.Errorf("db's own ready and pidfile: %v, %s", dbs[0].Ready, dbs[0].PidFile)
	}
	if w.Names[0] != "3" || w.RangePrefix != "workers" || w.Dir != filepath.Join(dir, "app") || len(w.Options) != 2 || w.Options[1].Scope != "1-2" || w.Options[1].Value != "4" {
		t.Errorf("workers: %+v", w)
	}
	ns, err := w.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	if ns[0].Name != "workers1" || nodes.Quote(ns[0].Command) != "celery -A proj worker -l INFO -c 4" || nodes.Quote(ns[2].Command) != "celery -A proj worker -l INFO" {
		t.Errorf("workers1 %s %q, workers3 %q", ns[0].Name, ns[0].Command, ns[2].Command)
	}
}

// A Procfile is read when there is no multi.toml: a group of one node
// per line, run by /bin/sh; the file is found from a folder below.
func TestProcfile(t *testing.T) {
	t.Parallel()
	dir := writeProject(t, procfileName, "# comment\nweb: bundle exec rails s -p $PORT\nworker:   celery -A proj worker\n")
	sub := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	pf, err := findProjectFile(sub)
	if err != nil {
		t.Fatal(err)
	}
	if pf.Dir != dir || len(pf.Groups) != 2 || pf.Groups[1].Name != "worker" ||
		!slices.Equal(pf.Groups[1].Spec.Command, []string{"/bin/sh", "-c", "celery -A proj worker"}) {
		t.Errorf("Procfile read as %+v", pf)
	}
}

// No project file above: nil, no error.
func TestNoProjectFile(t *testing.T) {
	t.Parallel()
	pf, err := findProjectFile(t.TempDir())
	if pf != nil && pf.Dir != "/" || err != nil {
		t.Errorf("findProjectFile of an empty folder: %v, %v", pf, err)
	}
}

// Each mistake is refused with the file, and the line or the key.
func TestProjectFileRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, text, want string }{
		{"multi.toml", "[group.w]\ncomand = \"sleep 1\"\n", "unknown key group.w.comand: did you mean command?"},
		{"multi.toml", "rundri = \"x\"\n[group.w]\ncommand = \"sleep 1\"\n", "did you mean rundir?"},
		{"multi.toml", "[group.w]\ncommand = \"sleep 1\"\nzzzz = 1\n", "unknown key group.w.zzzz; the keys are command, names"},
		{"multi.toml", "[group.w]\ncommand = \"sleep 1\"\ncount = 2\nnames = [\"a\"]\n", "group w: names and count both given"},
		{"multi.toml", "[group.w]\nnames = [\"a\"]\n", "group w: no command"},
		{"multi.toml", "[group.w\ncommand = 1\n", "line 2: expected"},
		{"multi.toml", "settle = \"soon\"\n[group.w]\ncommand = \"x\"\n", "settle wants a positive duration"},
		{"multi.toml", "[group.w]\ncommand = \"x\"\nkill_mode = \"all\"\n", "kill_mode"},
		{"multi.toml", "[group.w]\ncommand = \"x\"\nlimit_nofile = -1\n", `group w: limit_nofile: bad limit: want N or SOFT:HARD (numbers, or infinity), not "-1"`},
		{"multi.toml", "[group.w]\ncommand = \"x\"\nlimit_nofile = \"128:64\"\n", "limit_nofile: bad limit: soft limit 128 above the hard limit 64"},
		{"multi.toml", "[group.w]\ncommand = \"x\"\nmemory_max = 1.5\n", "memory_max: want a number or a string, not 1.5"},
		{"multi.toml", "[group.w]\ncommand = \"x\"\nlimit_nofiles = 64\n", "unknown key group.w.limit_nofiles: did you mean limit_nofile?"},
		{"multi.toml", "[group.w]\ncommand = \"x\"\nmemory_mx = \"1G\"\n", "did you mean memory_max?"},
		{"multi.toml", "[group.w]\ncommand = \"x\"\noptions = [\"-c\", \"4\", \"extra\"]\n", "options"},
		{"multi.toml", "rundir = \"x\"\n", "no [group.NAME] table"},
		{"Procfile", "web bundle exec\n", "line 1: want NAME: COMMAND"},
		{"Procfile", "w/1: x\n", "line 1: group name"},
	} {
		dir := writeProject(t, c.name, c.text)
		_, err := findProjectFile(dir)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), filepath.Join(dir, c.name)) {
			t.Errorf("%q: error %v; want one naming the file and %q", c.text, err, c.want)
		}
	}
}

// A project file others can write to, or too large, is refused.
func TestProjectFileUntrusted(t *testing.T) {
	t.Parallel()
	dir := writeProject(t, projectFileName, "[group.w]\ncommand = \"sleep 1\"\n")
	path := filepath.Join(dir, projectFileName)
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := findProjectFile(dir); err == nil || !strings.Contains(err.Error(), "others can write to it") {
		t.Errorf("a world-writable project file: %v", err)
	}
	if os.Geteuid() == 0 {
		// As root, a file of another user's, though only they can write it.
		other := writeProject(t, projectFileName, "[group.w]\ncommand = \"sleep 1\"\n")
		if err := os.Chown(filepath.Join(other, projectFileName), 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, err := findProjectFile(other); err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
			t.Errorf("a project file of another user's, read as root: %v", err)
		}
	}
	big := writeProject(t, projectFileName, "# "+strings.Repeat("x", projectFileMax)+"\n")
	if _, err := findProjectFile(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a huge project file: %v", err)
	}
}
