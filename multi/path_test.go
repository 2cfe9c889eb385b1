//go:build linux

package multi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/multi-launcher/multi/multi"
)

// The command is looked up on the caller's PATH when Cluster.Env sets
// none, as os/exec does, and the node gets exactly Env; a PATH in Env
// wins.
func TestPathAsOSExec(t *testing.T) {
	c := cluster(t, "", "w1")
	c.Env = []string{"FOO=1"}
	res, err := c.Start(context.Background())
	if err != nil {
		t.Fatalf("Start with Env FOO=1: %v", err)
	}
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", res[0].PID))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(env, []byte("FOO=1\x00")) || bytes.Contains(env, []byte("PATH=")) {
		t.Errorf("node environment %q; want FOO=1 and no PATH", env)
	}
	if _, err := c.Restart(context.Background(), multi.RestartOptions{}); err != nil {
		t.Errorf("Restart with Env FOO=1: %v", err)
	}
	if _, err := c.StopWait(context.Background(), multi.StopOptions{}); err != nil {
		t.Fatal(err)
	}

	c.Env = []string{"PATH=" + t.TempDir()} // no sleep there
	if _, err := c.Start(context.Background()); !errors.Is(err, multi.ErrCommandNotFound) {
		t.Fatalf("Start with an Env PATH without sleep: %v; want launch.ErrCommandNotFound", err)
	}
}

// A folder as the command is a program that cannot be run (126 under
// run), not a plain failure.
func TestDirectoryCommandNotExecutable(t *testing.T) {
	c := cluster(t, "", "w1")
	c.Nodes[0].Command = []string{t.TempDir()}
	_, err := c.Start(context.Background())
	if !errors.Is(err, multi.ErrCommandNotExecutable) {
		t.Fatalf("Start of a folder: %v; want launch.ErrCommandNotExecutable", err)
	}
	if code := multi.ExitCode(err); code != 126 {
		t.Errorf("ExitCode(%v) = %d; want 126", err, code)
	}
}
