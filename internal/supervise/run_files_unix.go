//go:build unix

package supervise

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/internal/runtag"
	"github.com/multi-launcher/multi/internal/safefs"
	"github.com/multi-launcher/multi/nodes/pidfile"
)

// The files a run makes, the ready file and the nodes' run tags, are made
// and removed in folders it reached once, without following an untrusted
// link, and held open (see [safefs.Folder]): a folder swapped for a link later
// sends nothing elsewhere, nothing is written through a planted link, and
// only the file the run made is removed.
type runFiles struct {
	readyDir  *safefs.Folder
	readyName string
	readyInfo fs.FileInfo // the ready file made, nil when there is none

	tagDir  *safefs.Folder
	tagInfo map[string]fs.FileInfo // each node's run tag, by name

	fatalInfo map[string]fs.FileInfo // each fatal node's mark, by name
}

// checkReadyFile reaches the ready file's folder, before anything starts,
// and says why it cannot.
func (r *run) checkReadyFile() error {
	if r.o.ReadyFile == "" {
		return nil
	}
	if r.o.AllowShared {
		// The ready file's folder is one of the run's own, as a
		// node's pidfile folder is (see Cluster.AllowSharedFolders).
		record.AcceptShared(filepath.Dir(r.o.ReadyFile), nil)
	}
	d, err := safefs.OpenFolder(filepath.Dir(r.o.ReadyFile), false)
	if err != nil {
		return fmt.Errorf("ready file %s: %w", r.o.ReadyFile, err)
	}
	if d.IsFolder(filepath.Base(r.o.ReadyFile)) {
		d.Close()
		return fmt.Errorf("ready file %s: is a folder", r.o.ReadyFile)
	}
	r.files.readyDir, r.files.readyName = d, filepath.Base(r.o.ReadyFile)
	return nil
}

// makeReady makes the ready file.
func (r *run) makeReady() {
	if r.files.readyDir == nil {
		return
	}
	st, err := r.files.readyDir.Make(r.files.readyName, []byte("ready\n"), 0o644)
	if err != nil {
		r.logf("ready file %s: %v", r.o.ReadyFile, err)
		return
	}
	r.files.readyInfo = st
}

// removeReady removes the ready file the run made, if it is still there.
func (r *run) removeReady() {
	if r.files.readyInfo != nil {
		r.files.readyDir.RemoveMade(r.files.readyName, r.files.readyInfo)
		r.files.readyInfo = nil
	}
}

// openTags reaches the rundir for the run tags, once it is made.
func (r *run) openTags() {
	d, err := safefs.OpenFolder(r.o.RunDir, false)
	if err != nil {
		r.logf("rundir %s: %v (no run tags: every exit will be taken for a stop from another shell)", r.o.RunDir, err)
		return
	}
	r.files.tagDir, r.files.tagInfo = d, map[string]fs.FileInfo{}
}

func (r *run) tag(rn *runNode) {
	if r.files.tagDir == nil {
		return
	}
	// Another run's, alive: its node, not to be taken. The start that
	// follows is refused, naming that run.
	if b, err := safefs.ReadMade(r.o.RunDir, rn.n.Name+runtag.Ext, 64); err == nil && runtag.Live(b) != 0 {
		return
	}
	st, err := r.files.tagDir.Make(rn.n.Name+runtag.Ext, runtag.ID(), 0o600)
	if err != nil {
		r.logf("%s: cannot leave its run tag (its exit will be taken for a stop from another shell): %v", rn.n.Name, err)
		return
	}
	r.files.tagInfo[rn.n.Name] = st
}

// markFatal leaves the mark of a node the run gave up on, for a status
// from another shell (see runtag.FatalExt).
func (r *run) markFatal(rn *runNode, why string) {
	if r.files.tagDir == nil {
		return
	}
	body := append(runtag.ID(), []byte(strings.ReplaceAll(why, "\n", " ")+"\n")...)
	st, err := r.files.tagDir.Make(rn.n.Name+runtag.FatalExt, body, 0o644)
	if err != nil {
		r.logf("%s: cannot leave its fatal mark (status will not show it fatal): %v", rn.n.Name, err)
		return
	}
	if r.files.fatalInfo == nil {
		r.files.fatalInfo = map[string]fs.FileInfo{}
	}
	r.files.fatalInfo[rn.n.Name] = st
	// A status from another shell finds the node by its record, which a
	// start that failed at once removed again (or never left): the node
	// is recorded, without a process.
	if _, err := record.Read(r.o.RunDir, rn.n.Name); errors.Is(err, fs.ErrNotExist) {
		if err := record.Write(r.o.RunDir, rn.n); err != nil {
			r.logf("%s: cannot record it (status will not know it): %v", rn.n.Name, err)
		}
	}
}

// tagged reports whether the node's run tag is still the one the run made.
func (r *run) tagged(name string) bool {
	return r.files.tagDir != nil && r.files.tagDir.Has(name+runtag.Ext, r.files.tagInfo[name])
}

// closeFiles removes the ready file and the run tags the run made, and
// lets their folders go.
func (r *run) closeFiles() {
	if r.files.readyDir != nil {
		r.removeReady()
		r.files.readyDir.Close()
	}
	if d := r.files.tagDir; d != nil {
		for name, st := range r.files.tagInfo {
			d.RemoveMade(name+runtag.Ext, st)
		}
		for name, st := range r.files.fatalInfo {
			d.RemoveMade(name+runtag.FatalExt, st)
		}
		d.Close()
	}
}

// heldByOther reports whether a node of the run's own (one it tagged and
// started), down under the run, was started again from another shell
// (after a stop from there): its pidfile's lock is held. The run's stop
// stops it too, so that no node of its own outlives the run.
func (r *run) heldByOther(rn *runNode) bool {
	// Never started by this run (running before it, or another run's):
	// not its own to stop.
	if rn.pid > 0 || rn.starting || !rn.ran || r.files.tagInfo[rn.n.Name] == nil {
		return false
	}
	info, err := pidfile.Inspect(rn.n.PidFile)
	if err != nil || info.State != pidfile.Running && info.State != pidfile.Elsewhere {
		return false
	}
	r.logf("%s: started from another shell (pid %d); stopped with the run", rn.n.Name, info.PID)
	return true
}
