//go:build unix

package multi

import (
	"context"
	"os"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/nodes"
)

// settings is what a caller set on c: each exported field, a func by its
// address (funcs do not compare).
func settings(c *Cluster) map[string]any {
	v := reflect.ValueOf(c).Elem()
	out := map[string]any{}
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		if fv := v.Field(i); fv.Kind() == reflect.Func {
			out[f.Name] = fv.Pointer()
		} else {
			out[f.Name] = fv.Interface()
		}
	}
	return out
}

// Nothing a verb does changes the caller's Cluster, whatever options it
// is given: Run neither turns off the settle window nor sets a timeout in
// it, and two calls on one Cluster can each have their own options. In a
// child process: Run reaps every child of its process.
func TestVerbsLeaveClusterAlone(t *testing.T) {
	if !testutil.InChild(t, "TestVerbsLeaveClusterAlone", "MULTI_TEST_VERBS_LEAVE_CLUSTER") {
		return
	}
	rundir := t.TempDir()
	ns, err := nodes.Spec{Names: []string{"w1", "w2"}, RunDir: rundir, Command: []string{"sleep", "300"}}.Nodes()
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Nodes: ns, RunDir: rundir, Env: os.Environ(), Progress: func(Result) {}}
	t.Cleanup(func() { c.Kill(context.Background(), StopOptions{}) })
	before := settings(c)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	o := StopOptions{Signal: syscall.SIGINT, Timeout: 20 * time.Second, Group: true, Signalled: func(Result) {}}
	verbs := []struct {
		name string
		do   func() error
	}{
		{"Start", func() error { _, err := c.Start(ctx); return err }},
		{"Status", func() error { _, err := c.Status(ctx); return err }},
		{"Send", func() error { _, err := c.Send(ctx, syscall.SIGWINCH, o); return err }},
		{"Restart", func() error { _, err := c.Restart(ctx, RestartOptions{Stop: o, Rolling: true}); return err }},
		{"StopWait", func() error { _, err := c.StopWait(ctx, o); return err }},
		{"Start again", func() error { _, err := c.Start(ctx); return err }},
		{"Stop", func() error { _, err := c.Stop(ctx, o); return err }},
		{"Kill", func() error { _, err := c.Kill(ctx, o); return err }},
		{"Run", func() error {
			// Stopped once every node holds its lock: its ready file is there.
			ready := rundir + "/ready"
			rctx, stop := context.WithCancel(ctx)
			defer stop()
			go func() {
				for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
					if _, err := os.Stat(ready); err == nil {
						break
					}
				}
				stop()
			}()
			_, err := c.Run(rctx, RunOptions{ReadyFile: ready, Stop: o})
			return err
		}},
	}
	for _, v := range verbs {
		if err := v.do(); err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		for name, now := range settings(c) {
			if !reflect.DeepEqual(now, before[name]) {
				t.Errorf("%s changed the Cluster's %s: %v; was %v", v.name, name, now, before[name])
			}
		}
	}
}
