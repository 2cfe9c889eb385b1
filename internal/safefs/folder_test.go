//go:build unix

package safefs_test

import (
	"errors"
	"github.com/multi-launcher/multi/internal/testutil"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/internal/safefs"
)

// A symbolic link on the way to a file is followed only when nobody but
// root (or this user) could have made or swapped it; each case below
// fails one rule only, and nothing is created where the link points.
func TestFolderLinks(t *testing.T) {
	needRoot(t)
	t.Parallel()
	base := t.TempDir()
	os.Chmod(base, 0o755)
	outside := filepath.Join(base, "outside")
	os.Mkdir(outside, 0o755)
	mk := func(dir string, mode os.FileMode, uid int) string {
		t.Helper()
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chmod(dir, mode)
		os.Chown(dir, uid, uid)
		return dir
	}
	link := func(dir string, uid int) string {
		t.Helper()
		l := filepath.Join(dir, "l")
		if err := os.Symlink(outside, l); err != nil {
			t.Fatal(err)
		}
		os.Lchown(l, uid, uid)
		return l
	}
	for _, c := range []struct {
		name string
		mode os.FileMode
		// uids of the folder and of the link in it
		dirUID, linkUID int
		want            string // "" when the link is followed
	}{
		{"link-of-another-user", 0o755, 0, nobody, "owned by uid 65534, who could point it anywhere"},
		{"folder-of-another-user", 0o755, nobody, 0, "a folder of uid 65534, who could swap it"},
		{"folder-others-write", 0o777, 0, 0, "which others can write to (mode 777)"},
		{"root-link-root-folder", 0o755, 0, 0, ""},
		{"root-link-sticky-folder", 0o777 | os.ModeSticky, 0, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := mk(filepath.Join(base, c.name), c.mode, c.dirUID)
			l := link(dir, c.linkUID)
			target := filepath.Join(outside, c.name)
			d, err := safefs.OpenFolder(filepath.Join(l, c.name), true)
			if err == nil {
				d.Close()
			}
			_, serr := os.Stat(target)
			if c.want == "" {
				if err != nil || serr != nil {
					t.Errorf("trusted link not followed: %v, %v", err, serr)
				}
				return
			}
			var le *safefs.UnsafeLinkError
			if !errors.As(err, &le) || le.Link != l || !strings.Contains(err.Error(), c.want) {
				t.Errorf("OpenFolder through %s: %v; want an UnsafeLinkError saying %q", l, err, c.want)
			}
			if serr == nil {
				t.Errorf("%s was created through the link", target)
			}
		})
	}
}

// The fixtures these tests share with other packages' (see package
// testutil).
const nobody = testutil.Nobody

var (
	needRoot = testutil.NeedRoot
	rootFile = testutil.RootFile
)

// A folder that someone other than root or this user can write to is
// refused, as OpenSSH's StrictModes refuses such a home, with an error
// naming it, its owner and its mode; accepted, it is opened and says it
// is shared. Anyone who can write to it could have put any file there,
// or renamed one of root's there under a record's name.
func TestUnsafeFolderRefused(t *testing.T) {
	needRoot(t)
	t.Parallel()
	base := t.TempDir()
	for _, c := range []struct {
		name string
		mode os.FileMode
		uid  int
		want string // "" when the folder is safe
	}{
		{"other-users", 0o755, nobody, "(owner uid 65534, mode 755)"},
		{"group-writable", 0o775, 0, "(owner uid 0, mode 775)"},
		{"world-writable", 0o777, 0, "(owner uid 0, mode 777)"},
		{"sticky", 0o777 | os.ModeSticky, 0, "(owner uid 0, mode 1777)"},
		{"roots", 0o755, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(base, c.name)
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			os.Chmod(dir, c.mode)
			os.Chown(dir, c.uid, c.uid)
			d, err := safefs.OpenFolder(dir, false)
			if c.want == "" {
				if err != nil {
					t.Fatalf("OpenFolder of a safe folder: %v", err)
				}
				if d.Shared() {
					t.Errorf("a safe folder says it is shared")
				}
				d.Close()
				return
			}
			var ue *safefs.UnsafeFolderError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), "folder "+dir+" "+c.want) {
				t.Fatalf("OpenFolder(%s): %v; want an UnsafeFolderError saying %q", dir, err, c.want)
			}
			safefs.AcceptShared(dir)
			d, err = safefs.OpenFolder(dir, false)
			if err != nil {
				t.Fatalf("OpenFolder of an accepted folder: %v", err)
			}
			defer d.Close()
			if !d.Shared() {
				t.Errorf("an accepted unsafe folder does not say it is shared")
			}
		})
	}
}
