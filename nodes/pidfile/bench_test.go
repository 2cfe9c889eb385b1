//go:build unix

package pidfile_test

// Benchmarks of the hot paths in package pidfile: the lock probe that the
// waiter repeats, and the pidfile work of each start and stopwait. They
// measure; they assert no timing. `make bench` runs them (see
// docs/benchmarks.md). Set MULTI_BENCH_DIR to put their files on another
// filesystem than the temp dir's.

import (
	"github.com/multi-launcher/multi/internal/testutil"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/multi-launcher/multi/nodes/pidfile"
)

// benchDir: see [testutil.BenchDir].
var benchDir = testutil.BenchDir

// benchHolder starts a process that holds path's lock (this test binary,
// in its holder role) and stops it at the end of the benchmark.
func benchHolder(b *testing.B, path string) int {
	b.Helper()
	cmd, _ := testutil.StartHolder(b, path, testutil.HoldRelease)
	return cmd.Process.Pid
}

// BenchmarkHolder is the waiter's lock probe: fcntl(F_GETLK) on a pidfile
// that is already open, held by another process.
func BenchmarkHolder(b *testing.B) {
	path := filepath.Join(benchDir(b), "w1.pid")
	pid := benchHolder(b, path)
	h, err := pidfile.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	b.ResetTimer()
	for range b.N {
		if st, got, err := h.Holder(); err != nil || st != pidfile.Running || got != pid {
			b.Fatalf("holder: %v %d %v", st, got, err)
		}
	}
}

// BenchmarkHolderStale is the same probe on a pidfile nobody holds: what
// the waiter sees once a node is gone.
func BenchmarkHolderStale(b *testing.B) {
	path := filepath.Join(benchDir(b), "w1.pid")
	if err := os.WriteFile(path, []byte("12345\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	h, err := pidfile.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	b.ResetTimer()
	for range b.N {
		if st, _, err := h.Holder(); err != nil || st != pidfile.Stale {
			b.Fatalf("holder: %v %v", st, err)
		}
	}
}

// BenchmarkInspect is a full look at a held pidfile (open, F_GETLK, read
// the pid, close): what status does per node, and stopwait before it
// signals.
func BenchmarkInspect(b *testing.B) {
	path := filepath.Join(benchDir(b), "w1.pid")
	benchHolder(b, path)
	b.ResetTimer()
	for range b.N {
		if info, err := pidfile.Inspect(path); err != nil || info.State != pidfile.Running {
			b.Fatalf("inspect: %+v %v", info, err)
		}
	}
}

// BenchmarkOpenClose is the waiter's per-target set-up: open a pidfile
// for lock tests, and close it.
func BenchmarkOpenClose(b *testing.B) {
	path := filepath.Join(benchDir(b), "w1.pid")
	benchHolder(b, path)
	b.ResetTimer()
	for range b.N {
		h, err := pidfile.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		h.Close()
	}
}

// BenchmarkAcquireRelease is the exec step's pidfile work (create, lock,
// write the pid) and stopwait's removal of it, on a new file each time.
// On an ext4 without a journal (this machine's /tmp) every create scans
// past the inodes freed in the last 30 s, so the time per op grows with
// b.N there; on tmpfs it does not. See docs/benchmarks.md.
func BenchmarkAcquireRelease(b *testing.B) {
	path := filepath.Join(benchDir(b), "w1.pid")
	b.ResetTimer()
	for range b.N {
		l, err := pidfile.Acquire(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRemoveStale is stopwait's removal of a released pidfile (lock
// it, check it is the same file, unlink, close), file creation excluded.
func BenchmarkRemoveStale(b *testing.B) {
	dir := benchDir(b)
	const batch = 1000
	b.ResetTimer()
	for i := 0; i < b.N; i += batch {
		b.StopTimer()
		n := min(batch, b.N-i)
		for k := range n {
			if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(k)+".pid"), []byte("12345\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		for k := range n {
			if err := pidfile.RemoveStale(filepath.Join(dir, strconv.Itoa(k)+".pid")); err != nil {
				b.Fatal(err)
			}
		}
	}
}
