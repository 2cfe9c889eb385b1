package integration

import (
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/multi-launcher/multi/multi"
)

// podmanGlobal are the flags every podman command needs on a machine with
// cgroup v1 controllers (crun refuses those; runc does not), and podmanRun
// those of podman run where root lacks CAP_SYS_RESOURCE (the container
// may not raise its limits) and there is no network to set up.
var (
	podmanGlobal = []string{"--runtime", "runc", "--cgroup-manager=cgroupfs"}
	podmanRun    = []string{"--network=none", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"}
)

// podman runs podman with args, within a minute, and returns its
// combined output and its error.
func podman(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "podman", append(append([]string(nil), podmanGlobal...), args...)...).CombinedOutput()
	return string(out), err
}

// mustPodman is podman that fails the test on an error.
func mustPodman(t *testing.T, args ...string) string {
	t.Helper()
	out, err := podman(t, args...)
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// TestPodman builds contrib/podman/Containerfile (FROM scratch: a static
// multi and Debian's busybox-static) and runs multi run as the
// container's PID 1, under each --on-exit policy: podman exec ... multi
// status sees the nodes; a node killed inside (SIGKILL) ends the run with
// 137 (stop-all), is started again (restart) or stays down while the
// others run (ignore); and podman stop (TERM) ends the container, every
// node stopped, with exit 0 (under ignore 137: the node killed before
// decides, as tini's rule has it), before podman's own SIGKILL after its
// stop timeout. Every container and image it makes is removed, failed or
// not.
func TestPodman(t *testing.T) {
	t.Parallel()
	sameEverywhere(t)
	if _, err := exec.LookPath("podman"); err != nil {
		t.Skip("podman not installed (apt-get install -y podman runc busybox-static)")
	}
	if _, err := exec.LookPath("runc"); err != nil {
		t.Skip("runc not installed (apt-get install -y runc): crun refuses hybrid cgroups")
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: rootless podman needs subordinate ids set up")
	}
	busybox := "/bin/busybox"
	f, err := elf.Open(busybox)
	if err != nil {
		t.Skipf("%s: %v (apt-get install -y busybox-static)", busybox, err)
	}
	interp := false
	for _, p := range f.Progs {
		interp = interp || p.Type == elf.PT_INTERP
	}
	f.Close()
	if interp {
		t.Skipf("%s is not static: a scratch image has no libc (apt-get install -y busybox-static)", busybox)
	}
	// multi is built for the machine the containers run on, busybox's:
	// under make test-arm64 this test is an emulated arm64 program.
	goarch := map[elf.Machine]string{elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64", elf.EM_386: "386", elf.EM_RISCV: "riscv64", elf.EM_PPC64: "ppc64le", elf.EM_S390: "s390x"}[f.Machine]
	if goarch == "" {
		t.Skipf("%s: machine %v: no GOARCH known for it", busybox, f.Machine)
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "rootfs", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", filepath.Join(dir, "rootfs", "multi"), "..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("static build of multi: %v\n%s", err, out)
	}
	copyFile(t, busybox, filepath.Join(bin, "busybox"))
	for _, l := range []string{"sh", "sleep", "kill"} {
		if err := os.Symlink("busybox", filepath.Join(bin, l)); err != nil {
			t.Fatal(err)
		}
	}
	image := fmt.Sprintf("localhost/multi-test-%d", os.Getpid())
	t.Cleanup(func() { podman(t, "rmi", "-f", image) })
	mustPodman(t, "build", "--force-rm", "-t", image, "-f", "../contrib/podman/Containerfile", dir)

	for _, policy := range []string{"stop-all", "restart", "ignore"} {
		t.Run(policy, func(t *testing.T) {
			name := fmt.Sprintf("multi-test-%d-%s", os.Getpid(), policy)
			t.Cleanup(func() { podman(t, "rm", "-f", name) })
			args := append(append([]string{"run", "-d", "--name", name}, podmanRun...), image,
				"3", "--on-exit="+policy, "--backoff=0.1s", "--timeout=5s", "--", "/bin/sleep", "1000")
			mustPodman(t, args...)
			pids := containerNodes(t, name, func(st map[string]nodeState) bool {
				return len(st) == 3 && st["celery1"].running() && st["celery2"].running() && st["celery3"].running()
			})
			killed := pids["celery1"].PID
			mustPodman(t, "exec", name, "/bin/kill", "-KILL", strconv.Itoa(killed))
			switch policy {
			case "stop-all":
				if code := strings.TrimSpace(mustPodman(t, "wait", name)); code != "137" {
					t.Errorf("after celery1 was killed: the container's exit code %s; want 137 (128+KILL, the node's)", code)
				}
				logs := mustPodman(t, "logs", name)
				for _, n := range []string{"celery2", "celery3"} {
					if !strings.Contains(logs, n+": stopped (pid") {
						t.Errorf("logs do not say %s stopped:\n%s", n, logs)
					}
				}
				return
			case "restart":
				containerNodes(t, name, func(st map[string]nodeState) bool {
					return st["celery1"].running() && st["celery1"].PID != killed
				})
			case "ignore":
				st := containerNodes(t, name, func(st map[string]nodeState) bool { return !st["celery1"].running() })
				if !st["celery2"].running() || !st["celery3"].running() {
					t.Errorf("after celery1 was killed: %+v; want celery2 and celery3 running still", st)
				}
			}
			// Well under the 20 s podman gives before its SIGKILL: multi
			// stops its nodes with TERM, then KILL after its --timeout.
			mustPodman(t, "stop", "-t", "20", name)
			code := strings.TrimSpace(mustPodman(t, "inspect", "--format", "{{.State.ExitCode}}", name))
			logs := mustPodman(t, "logs", name)
			// As tini's: after a requested stop, 0; but the first node
			// that exited unexpectedly decides, and under ignore that is
			// celery1, killed (128+9). podman's own SIGKILL would leave
			// 137 too, without the lines of the stop checked below.
			want := map[string]string{"restart": "0", "ignore": "137"}[policy]
			if code != want {
				t.Errorf("podman stop: the container's exit code %s; want %s\n%s", code, want, logs)
			}
			for _, n := range []string{"celery1", "celery2", "celery3"} {
				if policy == "ignore" && n == "celery1" {
					continue
				}
				if !strings.Contains(logs, n+": stopped (pid") {
					t.Errorf("logs do not say %s stopped:\n%s", n, logs)
				}
			}
		})
	}
}

// nodeState is a node as multi status --json shows it.
type nodeState struct{ multi.Status }

func (n nodeState) running() bool { return n.State == multi.StateRunning && n.PID > 1 }

// containerNodes asks multi status inside the container until ok says the
// nodes are as wanted, for up to a minute, and returns them.
func containerNodes(t *testing.T, name string, ok func(map[string]nodeState) bool) map[string]nodeState {
	t.Helper()
	var last string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		// status exits non-zero while a node is not running: the JSON
		// says which.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		b, _ := exec.CommandContext(ctx, "podman", append(append([]string(nil), podmanGlobal...), "exec", name, "/multi", "status", "--json")...).Output()
		cancel()
		out := string(b)
		last = out
		var sts []nodeState
		if json.Unmarshal([]byte(out), &sts) != nil {
			continue
		}
		st := map[string]nodeState{}
		for _, s := range sts {
			st[s.Node.Name] = s
		}
		if ok(st) {
			return st
		}
	}
	logs, _ := podman(t, "logs", name)
	t.Fatalf("container %s: the nodes never were as wanted; last status:\n%s\nlogs:\n%s", name, last, logs)
	return nil
}
