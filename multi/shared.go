package multi

import (
	"fmt"
	"path/filepath"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/internal/safefs"
	"github.com/multi-launcher/multi/nodes"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// unconfirmed refuses n, whose record names no process, when its
// pidfile is in a folder others can write to, accepted by
// c.AllowSharedFolders: anyone who can rename files there could have put
// another pidfile of root's in its place (another node's, whose holder
// they could not signal themselves). There the holder is signalled only
// if it is the process n's record names ([Cluster.signalRecorded]'s
// check), the record being in a rundir nobody else can write to (records
// in a shared rundir are not read, so none names a process). nil when
// n's folder is not such a folder, or nothing holds the lock (pin.SignalKeep
// then says what it finds).
func (c *call) unconfirmed(n nodes.Node) error {
	if !c.AllowSharedFolders || !safefs.SharedFolder(filepath.Dir(n.PidFile)) {
		return nil
	}
	info, err := pidfile.Inspect(n.PidFile)
	if err != nil || info.State != pidfile.Running {
		return nil
	}
	return fmt.Errorf("%w: pidfile %s, in a folder others can write to, is held by pid %d, and no record names the process that runs %s",
		errUnconfirmedHolder, n.PidFile, info.PID, n.Name)
}

// othersPidfile refuses n, whose record names no process of its pidfile
// (none, or one of another pidfile: the pidfile given is not the one it
// was started with), when that pidfile is another node's of the rundir,
// held by the process that node's record names: the verb would signal
// that node.
func (c *call) othersPidfile(n nodes.Node) error {
	info, err := pidfile.Inspect(n.PidFile)
	if err != nil || info.State != pidfile.Running || info.PID <= 0 {
		return nil
	}
	recs, err := record.ReadAll(c.rundir())
	if err != nil {
		return nil
	}
	for _, o := range recs {
		if o.Name == n.Name || o.PidFile != n.PidFile {
			continue
		}
		if _, st, err := record.ReadStarted(c.rundir(), o.Name); err == nil && st.PID == info.PID {
			return fmt.Errorf("%w: %s is %s's (its record names pid %d, which holds it)", ErrOthersPidfile, n.PidFile, o.Name, st.PID)
		}
	}
	return nil
}
