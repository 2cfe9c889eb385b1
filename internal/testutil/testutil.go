// Package testutil holds the helpers that the tests of several packages
// share: a poll with a deadline, the root-only fixtures of the tests that
// play another user planting links, lock holders (the holder of a
// pidfile's lock, a process that holds one, another process's view of
// one) and whether an emulator runs them (Emulator). Only tests import it.
package testutil

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
	"time"
)

// PollTimeout bounds every polling loop of the tests, so that a failure
// fails within seconds instead of hanging until go test's own limit.
const PollTimeout = 30 * time.Second

// PollUntil calls done every millisecond until it reports true, and fails
// the test, saying what it was waiting for, if that takes longer than
// PollTimeout (or than the test has left).
func PollUntil(t testing.TB, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(PollTimeout)
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if td, ok := d.Deadline(); ok && td.Before(deadline) {
			deadline = td.Add(-time.Second)
		}
	}
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", PollTimeout, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// Nobody is the other user of the tests that plant links: the owner of
// the folder root was given.
const Nobody = 65534

// NeedRoot skips the test unless it runs as root, which it needs to make
// links and folders of another user.
func NeedRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root, to make links and folders of another user")
	}
}

// RootFile makes a file of root's, mode 0600, outside every folder multi
// is given, and returns a check that it is unchanged.
func RootFile(t testing.TB, path string) (unchanged func()) {
	t.Helper()
	if err := os.WriteFile(path, []byte("root's secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		b, err := os.ReadFile(path)
		st, serr := os.Stat(path)
		if err != nil || serr != nil || string(b) != "root's secret\n" || st.Mode() != 0o600 {
			t.Errorf("root's file %s changed: %q %v, mode %v %v", path, b, err, st.Mode(), serr)
		}
	}
}

// BenchDir returns a fresh folder for a benchmark's files: under
// $MULTI_BENCH_DIR when set (to measure another filesystem than the temp
// dir's), else the benchmark's temp dir.
func BenchDir(b *testing.B) string {
	b.Helper()
	base := os.Getenv("MULTI_BENCH_DIR")
	if base == "" {
		return b.TempDir()
	}
	dir, err := os.MkdirTemp(base, "multi-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// InChild runs the test named name again in a child process with env
// set to 1, and fails if it fails there; it reports true in that child
// (the test goes on) and false in the parent (the test is done). For a
// test that reaps every child of its process (wait4(-1)), which must not
// reap those of the other tests.
func InChild(t *testing.T, name, env string) bool {
	t.Helper()
	if os.Getenv(env) == "1" {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), env+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: "+name)) {
		t.Fatalf("in a child process: %v\n%s", err, out)
	}
	return false
}
