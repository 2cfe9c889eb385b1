//go:build unix

package pidfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/nodes/pidfile"
)

// nobody is the other user of these tests: the owner of the folder root
// was given, who plants links in it.
const nobody = 65534

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root, to make links and folders of another user")
	}
}

// rootFile makes a file of root's, mode 0600, outside every folder multi
// is given, and returns a check that it is unchanged.
func rootFile(t *testing.T, path string) (unchanged func()) {
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
