// Package manifests checks the recipes in contrib/ offline, without a
// cluster or network: the Kubernetes manifests strict-decode into the real
// k8s.io/api types (an unknown field or a wrong type fails), the Nomad job
// parses as HCL, the Dockerfile's COPY paths are in the build contexts its
// docker build line gives, and each recipe's grace period fits the
// --timeout that multi run is given. It is a module of its own, so that the main module's
// dependencies stay as they are: cd contrib/manifests && go test ./...
package manifests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// runTimeout returns the --timeout=D in a multi run command line, or
// multi's default (8s).
func runTimeout(t *testing.T, args []string) time.Duration {
	t.Helper()
	if len(args) == 0 || args[0] != "run" {
		t.Fatalf("command line %q: want multi run", args)
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--timeout="); ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Fatalf("--timeout: %v", err)
			}
			return d
		}
	}
	return 8 * time.Second
}

// readyPortGiven checks that a multi run's tcp: or http: readiness check
// asks a port its nodes are told to listen on: the check's port template
// ("800%i") is in the node's command line, after --. Else no node could
// ever be ready.
func readyPortGiven(t *testing.T, path string, args []string) {
	t.Helper()
	var port string
	cmd := -1
	for i, a := range args {
		if a == "--" {
			cmd = i + 1
			break
		}
		v, ok := strings.CutPrefix(a, "--ready=")
		if !ok {
			continue
		}
		v = strings.ReplaceAll(v, "%%", "%")
		if hp, ok := strings.CutPrefix(v, "tcp:"); ok {
			port = hp[strings.LastIndexByte(hp, ':')+1:]
		}
		if u, ok := strings.CutPrefix(v, "http:"); ok {
			if rest, ok := strings.CutPrefix(u, "http://"); ok {
				host, _, _ := strings.Cut(rest, "/")
				if i := strings.LastIndexByte(host, ':'); i >= 0 {
					port = host[i+1:]
				}
			}
		}
	}
	if port == "" {
		return
	}
	if cmd < 0 || !strings.Contains(strings.ReplaceAll(strings.Join(args[cmd:], " "), "%%", "%"), port) {
		t.Errorf("%s: the readiness check asks port %s, which no node's command line gives it (%q): no node could ever be ready", path, port, args)
	}
}

// TestSystemdDelegate checks that every unit hands its cgroup subtree to
// multi (Delegate=yes), so that each node's tree is a cgroup of its own.
func TestSystemdDelegate(t *testing.T) {
	units, err := filepath.Glob("../systemd/*.service")
	if err != nil || len(units) == 0 {
		t.Fatalf("no units: %v", err)
	}
	for _, u := range units {
		b, err := os.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains("\n"+string(b), "\nDelegate=yes\n") {
			t.Errorf("%s: no Delegate=yes: multi cannot make a cgroup per node under it", u)
		}
	}
}

func TestKubernetesDeployment(t *testing.T) {
	b, err := os.ReadFile("../kubernetes/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict(b, &d); err != nil {
		t.Fatalf("deployment.yaml: %v", err)
	}
	if d.Kind != "Deployment" || d.APIVersion != "apps/v1" {
		t.Errorf("kind %q, apiVersion %q", d.Kind, d.APIVersion)
	}
	spec := d.Spec.Template.Spec
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers; want 1", len(spec.Containers))
	}
	c := spec.Containers[0]
	if len(c.Command) != 1 || c.Command[0] != "multi" {
		t.Errorf("command %q; want multi as the entrypoint (PID 1)", c.Command)
	}
	timeout := runTimeout(t, c.Args)
	readyPortGiven(t, "deployment.yaml", c.Args)
	if g := spec.TerminationGracePeriodSeconds; g == nil {
		t.Errorf("no terminationGracePeriodSeconds; the default 30 s must be set to fit --timeout %s", timeout)
	} else if time.Duration(*g)*time.Second <= timeout {
		t.Errorf("terminationGracePeriodSeconds %d does not exceed --timeout %s", *g, timeout)
	}
	// The probes ask multi run's health endpoints, on the port its
	// --health flag serves.
	port := 0
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--health="); ok {
			p, err := strconv.Atoi(v[strings.LastIndexByte(v, ':')+1:])
			if err != nil {
				t.Fatalf("--health=%s: %v", v, err)
			}
			port = p
		}
	}
	if port == 0 {
		t.Fatalf("no --health=ADDRESS:PORT in %q", c.Args)
	}
	for _, p := range []struct {
		name, path string
		probe      *corev1.Probe
	}{{"liveness", "/livez", c.LivenessProbe}, {"readiness", "/readyz", c.ReadinessProbe}} {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port.IntValue() != port {
			t.Errorf("%s probe %+v; want httpGet %s on port %d (--health)", p.name, p.probe, p.path, port)
		}
	}
	exposed := false
	for _, cp := range c.Ports {
		exposed = exposed || int(cp.ContainerPort) == port
	}
	if !exposed {
		t.Errorf("containerPort %d (--health) not declared", port)
	}
	// The pidfiles live in a folder multi makes in an emptyDir (which is
	// world-writable, refused as a rundir), mounted at $MULTI_RUNDIR's
	// parent.
	var rundir string
	for _, e := range c.Env {
		if e.Name == "MULTI_RUNDIR" {
			rundir = e.Value
		}
	}
	vols := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		vols[v.Name] = v
	}
	found := false
	for _, m := range c.VolumeMounts {
		if m.MountPath == filepath.Dir(rundir) && vols[m.Name].EmptyDir != nil {
			found = true
		}
	}
	if !found {
		t.Errorf("MULTI_RUNDIR %q is not a folder in an emptyDir mount", rundir)
	}
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--ready-file="); ok && filepath.Dir(v) != rundir {
			t.Errorf("ready file %s not in the rundir %s", v, rundir)
		}
	}
}

func TestNomadJob(t *testing.T) {
	const path = "../nomad/workers.nomad.hcl"
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, diags := hclparse.NewParser().ParseHCL(src, path)
	if diags.HasErrors() {
		t.Fatalf("%s: %v", path, diags)
	}
	task := find(t, f.Body.(*hclsyntax.Body), "job", "group", "task")
	attr := func(b *hclsyntax.Body, name string) string {
		a, ok := b.Attributes[name]
		if !ok {
			t.Fatalf("%s: no %s", path, name)
		}
		v, diags := a.Expr.Value(nil)
		if diags.HasErrors() {
			t.Fatalf("%s: %s: %v", path, name, diags)
		}
		return v.AsString()
	}
	kill, err := time.ParseDuration(attr(task, "kill_timeout"))
	if err != nil {
		t.Fatal(err)
	}
	config := find(t, task, "config")
	if cmd := attr(config, "command"); cmd != "multi" {
		t.Errorf("command %q; want multi", cmd)
	}
	v, diags := config.Attributes["args"].Expr.Value(nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var args []string
	for _, e := range v.AsValueSlice() {
		args = append(args, e.AsString())
	}
	if timeout := runTimeout(t, args); kill <= timeout {
		t.Errorf("kill_timeout %s does not exceed --timeout %s", kill, timeout)
	}
}

// find follows nested blocks by type: job > group > task.
func find(t *testing.T, b *hclsyntax.Body, types ...string) *hclsyntax.Body {
	t.Helper()
	for _, typ := range types {
		var next *hclsyntax.Body
		for _, blk := range b.Blocks {
			if blk.Type == typ {
				next = blk.Body
				break
			}
		}
		if next == nil {
			t.Fatalf("no %s block", typ)
		}
		b = next
	}
	return b
}

// TestDockerfile checks the Dockerfile against the build it documents
// (its "docker build" line): the main context, from where that line is
// run (multi's checkout), holds every path a COPY takes from it; a COPY
// --from names an earlier stage or a build context the line gives; the
// -f path is the Dockerfile's; and multi run's --timeout is below the
// stop timeout of its "docker run" line.
func TestDockerfile(t *testing.T) {
	const path = "../docker/Dockerfile"
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	root := "../.." // multi's checkout, where the documented line is run
	var build, run []string
	var lines []string
	cont := ""
	for _, l := range strings.Split(string(src), "\n") {
		if c, ok := strings.CutPrefix(strings.TrimSpace(l), "#"); ok {
			f := strings.Fields(c)
			if len(f) > 2 && f[0] == "docker" && f[1] == "build" {
				build = f[2:]
			}
			if len(f) > 2 && f[0] == "docker" && f[1] == "run" {
				run = f[2:]
			}
			continue
		}
		if s, ok := strings.CutSuffix(l, "\\"); ok {
			cont += s + " "
			continue
		}
		if l = strings.TrimSpace(cont + l); l != "" {
			lines = append(lines, l)
		}
		cont = ""
	}
	if build == nil {
		t.Fatalf("%s documents no docker build line", path)
	}
	// The line's build contexts: the main one (its last word) and
	// --build-context NAME=PATH.
	contexts := map[string]bool{}
	var file string
	for i := 0; i < len(build); i++ {
		switch a := build[i]; {
		case a == "--build-context" && i+1 < len(build):
			i++
			name, _, _ := strings.Cut(build[i], "=")
			contexts[name] = true
		case (a == "-f" || a == "--file") && i+1 < len(build):
			i++
			file = build[i]
		case a == "-t" || a == "--tag":
			i++
		}
	}
	main := filepath.Join(root, build[len(build)-1])
	if file == "" {
		t.Errorf("docker build line %q: no -f", build)
	} else if abs1, abs2 := filepath.Join(main, file), path; !sameFile(abs1, abs2) {
		t.Errorf("docker build -f %s from %s is not %s", file, main, path)
	}
	stages := map[string]bool{}
	var entrypoint, cmd []string
	for _, l := range lines {
		f := strings.Fields(l)
		switch strings.ToUpper(f[0]) {
		case "FROM":
			if len(f) == 4 && strings.EqualFold(f[2], "AS") {
				stages[f[3]] = true
			}
			// podman (and a registries.conf without short-name
			// aliases) refuses a short name: the registry is named.
			if img := f[1]; img != "scratch" && !strings.Contains(strings.SplitN(img, "/", 2)[0], ".") {
				t.Errorf("%s: FROM %s: a short image name; write the registry (docker.io/library/...)", path, img)
			}
		case "COPY", "ADD":
			args, from := f[1:], ""
			for len(args) > 0 && strings.HasPrefix(args[0], "--") {
				if v, ok := strings.CutPrefix(args[0], "--from="); ok {
					from = v
				}
				args = args[1:]
			}
			if len(args) < 2 {
				t.Errorf("%s: %q: no source or no destination", path, l)
				continue
			}
			switch {
			case from != "" && (stages[from] || contexts[from]):
			case from != "":
				t.Errorf("%s: %q: --from=%s is neither an earlier stage nor a build context the docker build line gives", path, l, from)
			default:
				for _, s := range args[:len(args)-1] {
					if m, _ := filepath.Glob(filepath.Join(main, s)); len(m) == 0 {
						t.Errorf("%s: %q: %s is not in the build context %s", path, l, s, main)
					}
				}
			}
		case "ENTRYPOINT":
			entrypoint = execForm(t, l)
		case "CMD":
			cmd = execForm(t, l)
		}
	}
	if len(entrypoint) != 2 || entrypoint[0] != "multi" || entrypoint[1] != "run" {
		t.Fatalf("ENTRYPOINT %q; want multi run (PID 1)", entrypoint)
	}
	stop := 10 * time.Second // Docker's default
	for _, a := range run {
		if v, ok := strings.CutPrefix(a, "--stop-timeout="); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("--stop-timeout=%s: %v", v, err)
			}
			stop = time.Duration(n) * time.Second
		}
	}
	if timeout := runTimeout(t, append([]string{"run"}, cmd...)); stop <= timeout {
		t.Errorf("docker run's stop timeout %s does not exceed --timeout %s", stop, timeout)
	}
}

// execForm parses an instruction's JSON array (exec form).
func execForm(t *testing.T, line string) []string {
	t.Helper()
	_, rest, _ := strings.Cut(line, " ")
	var args []string
	if err := json.Unmarshal([]byte(rest), &args); err != nil {
		t.Fatalf("%q: not in exec form (a JSON array): %v", line, err)
	}
	return args
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// TestSystemdRunShell checks that the commands multi-run.service shows for
// a shell give the unit's rundir: $MULTI_RUNDIR is set for the unit only,
// so without --rundir a shell's multi looks in another folder and finds
// none of the nodes.
func TestSystemdRunShell(t *testing.T) {
	const path = "../systemd/multi-run.service"
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rundir string
	var shown []string
	for _, l := range strings.Split(string(src), "\n") {
		if v, ok := strings.CutPrefix(l, "Environment=MULTI_RUNDIR="); ok {
			rundir = v
		}
		if c, ok := strings.CutPrefix(l, "#   "); ok && strings.Contains(" "+c, " multi ") {
			shown = append(shown, c)
		}
	}
	if rundir == "" {
		t.Fatalf("%s sets no MULTI_RUNDIR", path)
	}
	if len(shown) == 0 {
		t.Errorf("%s shows no multi command for a shell", path)
	}
	for _, c := range shown {
		if !strings.Contains(c, "--rundir="+rundir) {
			t.Errorf("%s: %q: no --rundir=%s, the unit's rundir", path, c, rundir)
		}
	}
}

// TestSystemdRunReady checks that multi-run.service, Type=notify, makes
// READY=1 mean every node is ready: its multi run has a --ready check of
// a known kind, the unit gives systemd's start longer than multi's ready
// wait, and a log: check comes with the --logfile it reads.
func TestSystemdRunReady(t *testing.T) {
	const path = "../systemd/multi-run.service"
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	var notify bool
	startSec := 90 * time.Second // systemd's DefaultTimeoutStartSec
	for _, l := range strings.Split(string(src), "\n") {
		if l == "Type=notify" {
			notify = true
		}
		if v, ok := strings.CutPrefix(l, "ExecStart="); ok {
			args = strings.Fields(v)[1:]
		}
		if v, ok := strings.CutPrefix(l, "TimeoutStartSec="); ok {
			if startSec, err = time.ParseDuration(v); err != nil {
				t.Fatalf("TimeoutStartSec: %v", err)
			}
		}
	}
	if !notify {
		t.Fatalf("%s is not Type=notify", path)
	}
	runTimeout(t, args) // a multi run
	readyPortGiven(t, path, args)
	var check string
	readyTimeout := 60 * time.Second // multi's default
	logfile := false
	for _, a := range args {
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--ready="); ok {
			check = strings.ReplaceAll(v, "%%", "%")
		}
		if v, ok := strings.CutPrefix(a, "--ready-timeout="); ok {
			if readyTimeout, err = time.ParseDuration(v); err != nil {
				t.Fatalf("--ready-timeout: %v", err)
			}
		}
		logfile = logfile || strings.HasPrefix(a, "--logfile=")
	}
	kinds := []string{"tcp:", "http:", "exec:", "file:", "log:", "fd:", "notify"}
	known := false
	for _, k := range kinds {
		known = known || strings.HasPrefix(check, k)
	}
	switch {
	case check == "":
		t.Errorf("%s: multi run has no --ready: READY=1 would mean only that every node holds its lock", path)
	case !known:
		t.Errorf("%s: --ready=%s is none of %v", path, check, kinds)
	case strings.HasPrefix(check, "log:") && !logfile:
		t.Errorf("%s: --ready=%s reads the logfile, which run writes only with --logfile", path, check)
	}
	if startSec <= readyTimeout {
		t.Errorf("%s: TimeoutStartSec=%s is not above --ready-timeout=%s: systemd would kill the run before multi says which node is not ready", path, startSec, readyTimeout)
	}
}
