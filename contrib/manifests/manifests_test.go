// Package manifests checks the recipes in contrib/ offline, without a
// cluster or network: the Kubernetes manifests strict-decode into the real
// k8s.io/api types (an unknown field or a wrong type fails), the Nomad job
// parses as HCL, and each recipe's grace period fits the --timeout that
// multi run is given. It is a module of its own, so that the main module's
// dependencies stay as they are: cd contrib/manifests && go test ./...
package manifests

import (
	"os"
	"path/filepath"
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
	if g := spec.TerminationGracePeriodSeconds; g == nil {
		t.Errorf("no terminationGracePeriodSeconds; the default 30 s must be set to fit --timeout %s", timeout)
	} else if time.Duration(*g)*time.Second <= timeout {
		t.Errorf("terminationGracePeriodSeconds %d does not exceed --timeout %s", *g, timeout)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.Exec == nil || c.LivenessProbe.Exec.Command[0] != "multi" {
		t.Errorf("liveness probe %+v; want multi status", c.LivenessProbe)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.Exec == nil {
		t.Errorf("readiness probe %+v; want the ready file", c.ReadinessProbe)
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
