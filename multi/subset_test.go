//go:build unix

package multi_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes/pidfile"
	"github.com/multi-launcher/multi/waiter"
)

// hupNodeEnv makes the test binary, at init, a node that says "up", then
// "hup" at each SIGHUP, and exits 0 on SIGTERM (or by itself after a
// minute).
const hupNodeEnv = "MULTI_TEST_HUP_NODE"

func init() {
	if os.Getenv(hupNodeEnv) == "" {
		return
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM)
	fmt.Println("up")
	timeout := time.After(time.Minute)
	for {
		select {
		case s := <-sigs:
			if s == syscall.SIGTERM {
				os.Exit(0)
			}
			fmt.Println("hup")
		case <-timeout:
			os.Exit(3)
		}
	}
}

func logSays(n string, word string) bool {
	b, err := os.ReadFile(n)
	return err == nil && strings.Contains(string(b), word+"\n")
}

// Only acts on a subset, and Send sends any signal through the lock
// without calling it a stop: the nodes chosen get HUP and keep running,
// the other gets nothing.
func TestOnlySend(t *testing.T) {
	c := cluster(t, "", "w1", "w2", "w3")
	for i := range c.Nodes {
		c.Nodes[i].Command = []string{os.Args[0], "-test.run=^$"}
	}
	c.Env = append(os.Environ(), hupNodeEnv+"=1", "GORACE=atexit_sleep_ms=0")
	ctx := context.Background()
	if _, err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes {
		pollUntil(t, n.Name+" up", func() bool { return logSays(n.LogFile, "up") })
	}
	sub, err := c.Only("w3", "w1")
	if err != nil {
		t.Fatal(err)
	}
	if len(sub.Nodes) != 2 || sub.Nodes[0].Name != "w1" || sub.Nodes[1].Name != "w3" {
		t.Fatalf("Only(w3, w1) has %v; want w1, w3", sub.Nodes)
	}
	res, err := sub.Send(ctx, syscall.SIGHUP, multi.StopOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Outcome != multi.Signalled || r.Signal != syscall.SIGHUP || r.PID <= 1 {
			t.Errorf("%s: %s, signal %d; want signalled HUP", r.Node.Name, r, r.Signal)
		}
		pollUntil(t, r.Node.Name+" to say hup", func() bool { return logSays(r.Node.LogFile, "hup") })
	}
	for _, n := range c.Nodes {
		if info, err := pidfile.Inspect(n.PidFile); err != nil || info.State != pidfile.Running {
			t.Errorf("%s after HUP: %+v, %v; want running", n.Name, info, err)
		}
	}
	if logSays(c.Nodes[1].LogFile, "hup") {
		t.Errorf("w2, not chosen, got HUP")
	}
	if _, err := sub.Send(ctx, 0, multi.StopOptions{}); err == nil {
		t.Errorf("Send(0): no error; want an invalid signal")
	}
	if _, err := c.Only("w1", "w9"); !errors.Is(err, multi.ErrUnknownNode) {
		t.Errorf("Only(w1, w9): %v; want ErrUnknownNode", err)
	}
	if _, err := c.StopWait(ctx, multi.StopOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Only carries every setting of the Cluster over: each exported field,
// set to something not zero, is the same in the subset.
func TestOnlyKeepsSettings(t *testing.T) {
	c := &multi.Cluster{}
	v := reflect.ValueOf(c).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if !v.Type().Field(i).IsExported() || v.Type().Field(i).Name == "Nodes" {
			continue
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int64:
			f.SetInt(7)
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		case reflect.Func:
			f.Set(reflect.MakeFunc(f.Type(), func([]reflect.Value) []reflect.Value { return nil }))
		case reflect.Interface:
			f.Set(reflect.ValueOf(waiter.Default))
		default:
			t.Fatalf("field %s: kind %s not handled by this test", v.Type().Field(i).Name, f.Kind())
		}
	}
	sub, err := c.Only()
	if err != nil {
		t.Fatal(err)
	}
	w := reflect.ValueOf(sub).Elem()
	for i := 0; i < v.NumField(); i++ {
		name := v.Type().Field(i).Name
		if !v.Type().Field(i).IsExported() || name == "Nodes" {
			continue
		}
		a, b := v.Field(i), w.Field(i)
		same := false
		switch a.Kind() {
		case reflect.Func, reflect.Slice:
			same = a.Pointer() == b.Pointer()
		default:
			same = a.Interface() == b.Interface()
		}
		if !same {
			t.Errorf("Only dropped the field %s", name)
		}
	}
}

// Stopping, killing or signalling a node that is not running (no pidfile,
// or a stale one) is success, as ErrNotRunning documents: no error, PID 0,
// Outcome NotRunning (or StaleRemoved), and never ErrNotRunning.
func TestNotRunningIsSuccess(t *testing.T) {
	c := cluster(t, "", "w1", "w2")
	stale := func() {
		if err := os.WriteFile(c.Nodes[1].PidFile, []byte("12345\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	verbs := map[string]func(context.Context) ([]multi.Result, error){
		"Stop": defaults(c.Stop), "StopWait": defaults(c.StopWait), "Kill": defaults(c.Kill),
		"Send": func(ctx context.Context) ([]multi.Result, error) {
			return c.Send(ctx, syscall.SIGHUP, multi.StopOptions{})
		},
	}
	for name, verb := range verbs {
		stale()
		res, err := verb(ctx)
		if err != nil || errors.Is(err, multi.ErrNotRunning) {
			t.Errorf("%s: %v; want no error", name, err)
		}
		for _, r := range res {
			if r.Err != nil || r.PID != 0 || (r.Outcome != multi.NotRunning && r.Outcome != multi.StaleRemoved) {
				t.Errorf("%s: %s (err %v, pid %d); want not running, no error", name, r, r.Err, r.PID)
			}
		}
		if res[1].Outcome != multi.StaleRemoved {
			t.Errorf("%s: %s; want the stale pidfile removed", name, res[1])
		}
		if _, err := os.Stat(c.Nodes[1].PidFile); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: stale pidfile: %v; want removed", name, err)
		}
	}
}
