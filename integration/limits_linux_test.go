//go:build linux

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// forkScript is a node that forks children until a fork fails (or 200
// did not), kills them, writes "forked N: ERROR" to the file $1 (whole,
// through a rename) and sleeps until stopped.
const forkScript = `import os, sys, time
pids, err = [], None
for i in range(200):
    try:
        pid = os.fork()
    except OSError as e:
        err = e
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    pids.append(pid)
for p in pids:
    os.kill(p, 9)
    os.waitpid(p, 0)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("forked %d: %s\n" % (len(pids), err))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(300)
`

// A user's multi (uid 65534, as setpriv runs it) sets a node's
// RLIMIT_NPROC: the node, which forks until it cannot, fails to fork
// past it (EAGAIN), whichever way it started (the direct fork, and the
// exec step, which a relative $PATH element makes start the node). A
// hard RLIMIT_NOFILE above the user's own fails the start, naming the
// limit and EPERM, and leaves nothing started.
func TestLimitsAsUser(t *testing.T) {
	needSetpriv(t)
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("needs /usr/bin/python3, which the user can run")
	}
	t.Parallel()
	base := t.TempDir()
	os.Chmod(filepath.Dir(base), 0o755) // the user must reach their folders
	os.Chmod(base, 0o755)
	// multi where the user can run it: the build's folder is root's own.
	bin := filepath.Join(base, "multi")
	b, err := os.ReadFile(binary(t))
	mustOK(t, err)
	mustOK(t, os.WriteFile(bin, b, 0o755))
	mustOK(t, os.WriteFile(filepath.Join(base, "fork.py"), []byte(forkScript), 0o644))
	rundir, out := filepath.Join(base, "run"), filepath.Join(base, "out")
	for _, d := range []string{rundir, out} {
		mustOK(t, os.Mkdir(d, 0o700))
		mustOK(t, os.Chown(d, nobody, nobody))
	}
	var hard unix.Rlimit
	mustOK(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &hard)) // setpriv hands the user root's
	run := func(path string, args ...string) (int, string) {
		t.Helper()
		cmd := exec.Command(asNobody[0], append(append(asNobody[1:], bin), args...)...)
		cmd.Dir = base
		cmd.Env = []string{"MULTI_RUNDIR=" + rundir, "PATH=" + path, "HOME=" + out}
		b, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		t.Logf("multi %s: exit %d\n%s", strings.Join(args, " "), code, b)
		return code, string(b)
	}
	for _, c := range []struct{ name, path string }{
		{"direct", "/usr/bin:/bin"},
		{"step", "relbin:/usr/bin:/bin"}, // a relative element: the exec step looks the program up
	} {
		node, file := "n-"+c.name, filepath.Join(out, c.name)
		code, stdout := run(c.path, "start", node, "--limit-nproc=20", "--", "python3", filepath.Join(base, "fork.py"), file)
		if code != 0 {
			t.Fatalf("%s: start exit %d; want 0", c.name, code)
		}
		killAtEnd(t, stdout)
		waitForFile(t, file)
		b, err := os.ReadFile(file)
		mustOK(t, err)
		t.Logf("%s: %s", c.name, b)
		m := regexp.MustCompile(`^forked ([0-9]+): \[Errno 11\] Resource temporarily unavailable\n$`).FindStringSubmatch(string(b))
		if n := 0; m != nil {
			n, _ = strconv.Atoi(m[1])
			if n >= 20 {
				m = nil
			}
		}
		if m == nil {
			t.Errorf("%s: the node under --limit-nproc=20 says %q; want fewer than 20 forks, then EAGAIN", c.name, b)
		}
		pid := regexp.MustCompile(`started \(pid ([0-9]+)\)`).FindStringSubmatch(stdout)
		if pid != nil {
			lim, _ := os.ReadFile("/proc/" + pid[1] + "/limits")
			if !regexp.MustCompile(`(?m)^Max processes\s+20\s+20\s`).Match(lim) {
				t.Errorf("%s: the node's limits:\n%s\nwant Max processes 20 20", c.name, lim)
			}
		}
		if code, _ := run(c.path, "stopwait", node); code != 0 {
			t.Errorf("%s: stopwait exit %d", c.name, code)
		}

		// Above the user's own hard limit: refused, named, nothing started.
		over := strconv.FormatUint(hard.Max+1, 10)
		code, stdout = run(c.path, "start", "h-"+c.name, "--limit-nofile=64:"+over, "--", "sleep", "300")
		killAtEnd(t, stdout)
		want := "h-" + c.name + ": FAILED: --limit-nofile=64:" + over + ": cannot set RLIMIT_NOFILE: operation not permitted (the hard limit may not go above this process's own, " + strconv.FormatUint(hard.Max, 10) + ", without CAP_SYS_RESOURCE)"
		if code != 1 || !strings.Contains(stdout, want) {
			t.Errorf("%s: start with a hard limit above the user's: exit %d, %q; want 1 and %q", c.name, code, stdout, want)
		}
		for _, f := range []string{"h-" + c.name + ".pid", "h-" + c.name + ".node"} {
			if _, err := os.Stat(filepath.Join(rundir, f)); err == nil {
				t.Errorf("%s: %s left by the refused start", c.name, f)
			}
		}
	}
}
