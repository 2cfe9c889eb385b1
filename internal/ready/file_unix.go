//go:build unix

package ready

import (
	"errors"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/safefs"
)

// statNoLink stats path's last element in its folder, reached by the
// no-link walk; a link there is not followed and does not count.
func statNoLink(path string) error {
	// "/srv/up/" is the folder up, not a file "up" in it.
	path = filepath.Clean(path)
	d, err := safefs.OpenFolder(filepath.Dir(path), false)
	if err != nil {
		return safefs.BareErr(err)
	}
	defer d.Close()
	var st unix.Stat_t
	if err := unix.Fstatat(int(d.File().Fd()), filepath.Base(path), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return errors.New("is a symbolic link (not followed)")
	}
	return nil
}
