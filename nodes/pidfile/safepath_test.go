//go:build unix

package pidfile_test

import (
	"github.com/multi-launcher/multi/internal/testutil"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/nodes/pidfile"
)

// A pidfile whose folder was swapped for a link by the folder's owner is
// neither opened, locked, truncated nor removed: the root file the link
// leads to keeps its text.
func TestPidfileFolderLink(t *testing.T) {
	needRoot(t)
	t.Parallel()
	base := t.TempDir()
	os.Chmod(base, 0o755)
	victim := filepath.Join(base, "victim")
	os.Mkdir(victim, 0o755)
	unchanged := rootFile(t, filepath.Join(victim, "node.pid"))
	dir := filepath.Join(base, "theirs")
	os.Mkdir(dir, 0o755)
	os.Chown(dir, nobody, nobody)
	l := filepath.Join(dir, "w1")
	os.Symlink(victim, l)
	os.Lchown(l, nobody, nobody)
	path := filepath.Join(l, "node.pid")
	want := "bad pidfile: " + path + ": folder " + l + " is a symbolic link owned by uid 65534"
	check := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", what, err, want)
		}
	}
	lk, err := pidfile.Acquire(path)
	if err == nil {
		lk.Release()
	}
	check("Acquire", err)
	check("RemoveStale", pidfile.RemoveStale(path))
	_, err = pidfile.Inspect(path)
	check("Inspect", err)
	unchanged()
}

// The fixtures these tests share with other packages' (see package
// testutil).
const nobody = testutil.Nobody

var (
	needRoot = testutil.NeedRoot
	rootFile = testutil.RootFile
)
