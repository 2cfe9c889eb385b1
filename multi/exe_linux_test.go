package multi_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/internal/testutil"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// hostEnv makes the test binary, at init, a host program that starts node
// w1 in the rundir it names, deletes its own binary, starts w2, prints
// both results and exits, leaving the nodes running.
const hostEnv = "MULTI_TEST_HOST_RUNDIR"

func init() {
	rundir := os.Getenv(hostEnv)
	if rundir == "" {
		return
	}
	os.Unsetenv(hostEnv)
	ns, err := nodes.Spec{Names: []string{"w1", "w2"}, RunDir: rundir, Command: []string{"sleep", "300"}}.Nodes()
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	for i, n := range ns {
		if i == 1 {
			self, _ := os.Executable()
			if err := os.Remove(self); err != nil {
				fmt.Println(err)
				os.Exit(1)
			}
		}
		c := &multi.Cluster{Nodes: []nodes.Node{n}, RunDir: rundir, Detach: true}
		res, _ := c.Start(context.Background())
		fmt.Println(res[0])
	}
	os.Exit(0)
}

// The exec step re-executes /proc/self/exe, not the program's path: a
// host whose binary was deleted after its first start (as a deploy
// replaces it) still starts nodes.
func TestStartAfterBinaryDeleted(t *testing.T) {
	if emu := testutil.Emulator(); emu != "" {
		// qemu-user stands in for /proc/self/exe: it turns an exec of it
		// into an exec of the program's path, which is gone here. On
		// arm64 hardware the kernel's /proc/self/exe applies as on amd64.
		t.Skipf("under the emulator %s, an exec of /proc/self/exe execs the program's path, so a deleted binary cannot be re-executed", emu)
	}
	c := cluster(t, "", "w1", "w2")
	exe := filepath.Join(t.TempDir(), "host")
	copyFile(t, os.Args[0], exe)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), hostEnv+"="+c.RunDir, "GORACE=atexit_sleep_ms=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("host: %v\n%s", err, out)
	}
	if _, err := os.Stat(exe); err == nil {
		t.Fatalf("the host's binary is still there")
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "w1: started") || !strings.HasPrefix(lines[1], "w2: started") {
		t.Fatalf("host said:\n%s\nwant w1 and w2 started", out)
	}
	for _, n := range c.Nodes {
		if info, err := pidfile.Inspect(n.PidFile); err != nil || info.State != pidfile.Running {
			t.Errorf("%s: %+v, %v; want running", n.Name, info, err)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
