package record

import (
	"io/fs"
	"path/filepath"

	"github.com/multi-launcher/multi/internal/safefs"
	"github.com/multi-launcher/multi/nodes"
)

// AcceptShared accepts, for the rest of this process, rundir (if not
// "") and the folders of each node's pidfile, logfile and file:
// readiness check, although others than root and this user may write to
// them: as the user's choice (--allow-shared-folders), they are no
// longer refused with a [safefs.UnsafeFolderError]. What still holds
// there: no link followed, and only regular files of root or this user
// with one name are opened. A record in an accepted rundir proves
// nothing, so it is neither written nor read: give such nodes' names,
// files and command each time.
func AcceptShared(rundir string, ns []nodes.Node) {
	if rundir != "" {
		safefs.AcceptShared(rundir)
	}
	for _, n := range ns {
		safefs.AcceptShared(filepath.Dir(n.PidFile), filepath.Dir(n.LogFile))
		// And the folder of a file: readiness check, which its node makes.
		if n.Ready.Kind == nodes.File {
			safefs.AcceptShared(filepath.Dir(filepath.Clean(n.Ready.Target)))
		}
	}
}

// errShared: records in a shared rundir are not read; to callers, as if
// there were none.
var errShared error = sharedError{}

type sharedError struct{}

func (sharedError) Error() string {
	return "not read: others than root and this user can write to its folder"
}

func (sharedError) Is(target error) bool { return target == fs.ErrNotExist }
