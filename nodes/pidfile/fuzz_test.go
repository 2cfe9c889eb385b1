package pidfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/multi-launcher/multi/nodes/pidfile"
)

// FuzzInspectPidfile writes fuzzed bytes as an unlocked pidfile and reads
// it the way every verb does. It must never panic, the file must read as
// stale (nobody holds its lock, whatever it says), and the pid read from
// its text is either none (with a reason) or within 2..1<<22 (Linux's
// PID_MAX_LIMIT): never 0, 1, a negative number or one too large. Seeds:
// testdata/fuzz/FuzzInspectPidfile.
func FuzzInspectPidfile(f *testing.F) {
	for _, s := range []string{"1234\n", "-1\n", "0\n", "1\n", "+5\n", " 5\n", "5", "", "\n\n", "4194304\n",
		"4194305\n", "99999999999999999999\n", "0x10\n", "1e3\n", "12\r\n", "12\x00\n", "12\nextra\n"} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "w1.pid")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		info, err := pidfile.Inspect(path)
		if err != nil {
			t.Fatalf("Inspect(%q): %v", b, err)
		}
		if info.State != pidfile.Stale || info.PID != 0 || info.Mismatch() {
			t.Fatalf("Inspect(%q) = %+v; want stale, no holder", b, info)
		}
		switch {
		case info.FileErr != nil && info.FilePID != 0:
			t.Fatalf("Inspect(%q): file pid %d with error %v", b, info.FilePID, info.FileErr)
		case info.FileErr == nil && (info.FilePID < 2 || info.FilePID > 1<<22):
			t.Fatalf("Inspect(%q): file pid %d", b, info.FilePID)
		}
		if err := pidfile.RemoveStale(path); err != nil {
			t.Fatalf("RemoveStale(%q): %v", b, err)
		}
	})
}
