package record_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// Records are read without following links or hanging on FIFOs, and a
// huge one is refused rather than read into memory: a record holds the
// command restart runs.
func TestReadRecordRefusesPlanted(t *testing.T) {
	t.Parallel()
	rundir := t.TempDir()
	good := `{"name":"%s","command":["sleep","1"],"pidfile":"/r/x.pid","logfile":"/r/x.log"}`
	target := filepath.Join(t.TempDir(), "elsewhere.node")
	os.WriteFile(target, []byte(strings.ReplaceAll(good, "%s", "w1")), 0o644)
	os.Symlink(target, record.Path(rundir, "w1"))
	mkfifo(record.Path(rundir, "w2"))
	os.WriteFile(record.Path(rundir, "w3"), []byte(strings.Repeat(" ", 2<<20)+strings.ReplaceAll(good, "%s", "w3")), 0o644)
	os.Mkdir(record.Path(rundir, "w4"), 0o755)
	for name, want := range map[string]string{
		"w1": "is a symbolic link (not followed)",
		"w2": "is a FIFO, not a regular file",
		"w3": "larger than 1048576 bytes",
		"w4": "is a directory, not a regular file",
	} {
		if _, err := record.Read(rundir, name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadRecord %s: %v; want %q", name, err, want)
		}
	}
	if _, err := record.Read(rundir, "w5"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent record: %v", err)
	}
}

// A pidfile or record that another user owns, in a folder others can
// write to (as /tmp), may have been planted there: every operation refuses
// it and leaves it as it is. The same file in a folder only root can write
// to is accepted. Needs root, to give files away.
func TestRefusePlantedByOtherUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to make files of another user")
	}
	shared := filepath.Join(t.TempDir(), "shared")
	os.Mkdir(shared, 0o755)
	os.Chmod(shared, 0o777|os.ModeSticky)
	record.AcceptShared(shared, nil) // else refused before any file is looked at
	pidpath := filepath.Join(shared, "w1.pid")
	os.WriteFile(pidpath, []byte("4242\n"), 0o644)
	os.WriteFile(record.Path(shared, "w1"), []byte(`{"name":"w1","command":["evil"],"pidfile":"/r/x.pid","logfile":"/r/x.log"}`), 0o644)
	for _, p := range []string{pidpath, record.Path(shared, "w1")} {
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	const want = "owned by uid 65534"
	check := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want an error saying %q", what, err, want)
		}
	}
	_, err := pidfile.Inspect(pidpath)
	check("Inspect", err)
	_, err = pidfile.Open(pidpath)
	check("Open", err)
	_, err = pidfile.Acquire(pidpath)
	check("Acquire", err)
	check("RemoveStale", pidfile.RemoveStale(pidpath))
	// A record there is not even opened.
	if _, err = record.Read(shared, "w1"); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "not read") {
		t.Errorf("ReadRecord: %v; want it not read", err)
	}
	if b, err := os.ReadFile(pidpath); err != nil || string(b) != "4242\n" {
		t.Errorf("pidfile changed: %q, %v", b, err)
	}

	// In a folder only root can write to, another user's file is fine.
	os.Chmod(shared, 0o755)
	if info, err := pidfile.Inspect(pidpath); err != nil || info.State != pidfile.Stale {
		t.Errorf("Inspect in a safe folder: %+v, %v", info, err)
	}
	if _, err := record.Read(shared, "w1"); err != nil {
		t.Errorf("ReadRecord in a safe folder: %v", err)
	}
}
