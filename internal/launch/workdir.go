package launch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/multi-launcher/multi/internal/safefs"
	"github.com/multi-launcher/multi/nodes"
)

// OpenWorkDir opens n's working folder (n.Dir), never following a
// symbolic link that someone other than root or this user could have
// planted (see [safefs.OpenFolder]), for a node's command to start in
// (fchdir(2) to the returned descriptor, O_PATH on Linux) rather than
// by a path that could be swapped meanwhile. When the command names its
// program relative to that folder (./run.sh), that program is a file in
// it, so the folder must also be one that only root or this user can
// write to (a [safefs.UnsafeFolderError] otherwise, unless it was accepted).
func OpenWorkDir(n nodes.Node) (*os.File, error) {
	var d *safefs.Folder
	var err error
	if len(n.Command) > 0 && strings.Contains(n.Command[0], "/") && !filepath.IsAbs(n.Command[0]) {
		d, err = safefs.OpenFolder(n.Dir, false)
	} else {
		d, err = safefs.OpenWorkFolder(n.Dir)
	}
	if err != nil {
		return nil, fmt.Errorf("working folder %s: %w", n.Dir, safefs.BareErr(err))
	}
	f := d.File()
	if f == nil {
		d.Close()
		return nil, errors.ErrUnsupported
	}
	return f, nil
}
