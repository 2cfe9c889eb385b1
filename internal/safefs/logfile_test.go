//go:build unix

package safefs_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/multi-launcher/multi/internal/safefs"
)

// A logfile that is a link planted by the owner of its folder is not
// opened: not when it points at a file of root's, not when it dangles (no
// file made at its target), not when a folder on the way is such a link.
func TestOpenLogfileRefusesPlanted(t *testing.T) {
	needRoot(t)
	t.Parallel()
	base := t.TempDir()
	os.Chmod(base, 0o755)
	secret := filepath.Join(base, "secret")
	unchanged := rootFile(t, secret)
	dir := filepath.Join(base, "theirs")
	os.Mkdir(dir, 0o755)
	os.Chown(dir, nobody, nobody)
	// Accepted, as --allow-shared-folders does, so that what is in it is
	// looked at: TestUnsafeFolderRefused covers the folder itself.
	safefs.AcceptShared(dir)
	plant := func(name, target string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		os.Lchown(p, nobody, nobody)
		return p
	}
	toSecret := plant("w1.log", secret)
	dangling := plant("w2.log", filepath.Join(base, "created"))
	folder := plant("w3", base)
	for path, want := range map[string]string{
		toSecret:                        "logfile " + toSecret + ": is a symbolic link (not followed)",
		dangling:                        "logfile " + dangling + ": is a symbolic link (not followed)",
		filepath.Join(folder, "w3.log"): "logfile " + folder + "/w3.log: folder " + folder + " is a symbolic link owned by uid 65534",
	} {
		f, err := safefs.OpenLogfile(path)
		if err == nil {
			f.Close()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("OpenLogfile(%s): %v; want %q", path, err, want)
		}
	}
	unchanged()
	for _, p := range []string{filepath.Join(base, "created"), filepath.Join(base, "w3.log")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was created through a link", p)
		}
	}
	// A FIFO there is refused at once rather than waited on, and also
	// when its planter holds it open for reading.
	fifo := filepath.Join(dir, "w4.log")
	syscall.Mkfifo(fifo, 0o644)
	if f, err := safefs.OpenLogfile(fifo); err == nil {
		f.Close()
		t.Errorf("OpenLogfile opened a FIFO")
	}
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if f, err := safefs.OpenLogfile(fifo); err == nil || !strings.Contains(err.Error(), "is a FIFO, not a regular file") {
		if err == nil {
			f.Close()
		}
		t.Errorf("OpenLogfile of a FIFO with a reader: %v", err)
	}
	// Another user's logfile in a folder others can write to.
	shared := filepath.Join(base, "shared")
	os.Mkdir(shared, 0o755)
	os.Chmod(shared, 0o777|os.ModeSticky)
	safefs.AcceptShared(shared)
	planted := filepath.Join(shared, "w6.log")
	os.WriteFile(planted, nil, 0o666)
	os.Chown(planted, nobody, nobody)
	if f, err := safefs.OpenLogfile(planted); err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
		if err == nil {
			f.Close()
		}
		t.Errorf("OpenLogfile of a planted file: %v", err)
	}
	// The owner's own regular file is fine in a folder only they can write.
	own := filepath.Join(base, "w5.log")
	f, err := safefs.OpenLogfile(own)
	if err != nil {
		t.Fatalf("OpenLogfile of a plain path: %v", err)
	}
	f.Close()
}
