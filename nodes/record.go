package nodes

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/multi-launcher/multi/internal/proc"
	"github.com/multi-launcher/multi/internal/safefs"
)

// RecordExt ends the name of every node record in a rundir.
const RecordExt = ".node"

// record is the JSON form of a node record.
type record struct {
	Name    string   `json:"name"`
	Host    string   `json:"host"`
	Index   int      `json:"index"`
	Command []string `json:"command"`
	Options []string `json:"options,omitempty"`
	Dir     string   `json:"dir,omitempty"`
	Env     []string `json:"env,omitempty"`
	PidFile string   `json:"pidfile"`
	LogFile string   `json:"logfile"`
	// SelfLock: the node locks its pidfile itself.
	SelfLock bool       `json:"self_lock,omitempty"`
	Ready    ReadyCheck `json:"ready,omitzero"`
	// PID and StartTicks: the process that runs the node (see [Started]).
	PID        int    `json:"pid,omitempty"`
	StartTicks uint64 `json:"start_ticks,omitempty"`
	PidfdIno   uint64 `json:"pidfd_ino,omitempty"`
	// PidNS: the pid namespace PID is a number of (see proc.PidNamespace).
	PidNS uint64 `json:"pid_ns,omitempty"`
	// Cgroup and KillMode: where the node's tree runs and how it stops.
	Cgroup   string `json:"cgroup,omitempty"`
	KillMode string `json:"kill_mode,omitempty"`
	// ReadyAt, ReadyStatus and LogOffset: what the start of the process
	// recorded saw of its readiness check (see [Readiness]).
	ReadyAt     int64  `json:"ready_at,omitempty"`
	ReadyStatus string `json:"ready_status,omitempty"`
	LogOffset   *int64 `json:"log_offset,omitempty"`
}

// RecordPath returns where the record of the node named name lives.
func RecordPath(rundir, name string) string {
	return filepath.Join(rundir, name+RecordExt)
}

// WriteRecord records n in rundir, creating the folder if needed, so that
// later commands can find its files and restart it without repeating its
// command. The write is atomic: a reader sees the old record or the new one,
// never a mix, even if the writer dies half way.
func WriteRecord(rundir string, n Node) error {
	return WriteRecordStarted(rundir, n, Started{})
}

// WriteRecordStarted records n like [WriteRecord], with the process that
// runs it, so that a node which lets go of its lock can still be found.
func WriteRecordStarted(rundir string, n Node, s Started) error {
	return WriteRecordReady(rundir, n, s, Readiness{LogOffset: -1})
}

// WriteRecordReady records n like [WriteRecordStarted], with what the
// start of its process s saw of its readiness check.
func WriteRecordReady(rundir string, n Node, s Started, rd Readiness) error {
	if err := CheckName(n.Name); err != nil {
		return err
	}
	rb, err := encodeRecord(n, s, rd)
	if err != nil {
		return err
	}
	defer recordBufs.Put(rb)
	data := rb.buf.Bytes() // the record and its newline
	path := RecordPath(rundir, n.Name)
	if len(data)-1 >= maxRecord {
		return tooLarge(n, path, len(data)-1)
	}
	fail := func(err error) error {
		// Name the record, not the temporary file, with the system's reason.
		var pe *fs.PathError
		var le *os.LinkError
		switch {
		case errors.As(err, &pe):
			err = pe.Err
		case errors.As(err, &le):
			err = le.Err
		}
		return fmt.Errorf("record %s: %w", path, err)
	}
	d, err := safefs.OpenFolder(rundir, true)
	if err != nil {
		return fail(err)
	}
	defer d.Close()
	if d.Shared() {
		return nil // never read there (see AcceptShared)
	}
	// A shared flock on the rundir's lock file while the temp file
	// exists: a command removes only the leftovers of writers that hold
	// none, dead ones.
	lk, err := openRunLock(d, true)
	if err != nil {
		return fail(err)
	}
	defer lk.Close()
	cleanTempsOnce(d, lk)
	if err := lockShared(lk); err != nil {
		return fail(err)
	}
	if err := writeSpare(d, n.Name, path, data); err == nil || !errors.Is(err, errNoSpare) {
		if err != nil {
			return fail(err)
		}
		return nil
	}
	var f *os.File
	var tmp string
	for try := 0; ; try++ {
		tmp = "." + n.Name + ".tmp" + strconv.FormatUint(uint64(rand.Uint32()), 10)
		f, err = d.Open(tmp, path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) || try >= 100 {
			break
		}
	}
	if err != nil {
		return fail(err)
	}
	recordWait()
	err = writeSynced(f, data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = d.Exchange(tmp, filepath.Base(path))
		if err == nil {
			// tmp names the old record now: the next write's file (see
			// writeSpare), unless another writer keeps one already.
			if d.RenameNew(tmp, spareName(n.Name)) != nil {
				d.Remove(tmp)
			}
			return nil
		}
		// No record yet (ENOENT), or no exchange here.
		err = d.Rename(tmp, filepath.Base(path))
	}
	if err != nil {
		d.Remove(tmp)
		return fail(err)
	}
	return nil
}

// encodeRecord is the record of n with its process s and its readiness
// rd as written: indented JSON, then a newline. The caller puts the
// buffer back into recordBufs once done with its bytes.
func encodeRecord(n Node, s Started, rd Readiness) (*recordBuf, error) {
	r := record{Name: n.Name, Host: n.Host, Index: n.Index, Command: n.Command, Options: n.Options, Dir: n.Dir,
		Env: n.Env, PidFile: n.PidFile, LogFile: n.LogFile, SelfLock: n.SelfLock, Ready: n.Ready,
		PID: s.PID, StartTicks: s.StartTicks, PidfdIno: s.PidfdIno, Cgroup: n.Cgroup, KillMode: n.KillMode}
	if s.PID > 0 {
		r.PidNS = proc.PidNamespace()
	}
	rd.put(&r)
	rb := recordBufs.Get().(*recordBuf)
	rb.buf.Reset()
	if err := rb.enc.Encode(&r); err != nil {
		recordBufs.Put(rb)
		return nil, err
	}
	return rb, nil
}

// ReadRecord reads the record of the node named name from rundir. The
// error wraps [fs.ErrNotExist] when there is none.
func ReadRecord(rundir, name string) (Node, error) {
	n, _, err := ReadRecordStarted(rundir, name)
	return n, err
}

// ReadRecordStarted reads a record like [ReadRecord], with the process it
// names (zero if none).
func ReadRecordStarted(rundir, name string) (Node, Started, error) {
	n, r, err := readRecord(nil, rundir, name)
	n.recorded = Started{}
	return n, r.started(), err
}

// readRecord reads a record in the folder d already open, or with d nil in
// rundir, and returns it also as it is on disk.
func readRecord(d *safefs.Folder, rundir, name string) (Node, record, error) {
	if err := CheckName(name); err != nil {
		return Node{}, record{}, err
	}
	path := RecordPath(rundir, name)
	b, err := readRecordFile(d, path)
	if err != nil {
		return Node{}, record{}, fmt.Errorf("record %s: %w", path, err)
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return Node{}, record{}, fmt.Errorf("record %s: %w", path, err)
	}
	if r.Name != name || !filepath.IsAbs(r.PidFile) || !filepath.IsAbs(r.LogFile) || len(r.Options) > len(r.Command) {
		return Node{}, record{}, fmt.Errorf("record %s: name, pidfile, logfile or command missing or not valid", path)
	}
	return Node{Name: r.Name, Host: r.Host, Index: r.Index, Command: r.Command, Options: r.Options,
		Dir: r.Dir, Env: r.Env, PidFile: r.PidFile, LogFile: r.LogFile, SelfLock: r.SelfLock, Ready: r.Ready,
		Cgroup: r.Cgroup, KillMode: r.KillMode, recorded: r.started()}, r, nil
}

// ReadRecords reads every node record in rundir, ordered by index and then
// by name. A missing rundir holds no records. A record that cannot be read
// (not valid, too large, planted) is skipped: it returns the others, and
// an error naming each one skipped.
func ReadRecords(rundir string) ([]Node, error) {
	var bad []error
	ns, err := readRecords(rundir, func(err error) { bad = append(bad, err) })
	if err != nil {
		return nil, err
	}
	for i := range ns {
		ns[i].recorded = Started{}
	}
	return ns, errors.Join(bad...)
}

// readRecords is ReadRecords, calling skipped with the error of each
// record it skips; the error is the rundir's.
func readRecords(rundir string, skipped func(error)) ([]Node, error) {
	d, err := safefs.OpenFolder(rundir, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rundir %s: %w", rundir, err)
	}
	defer d.Close()
	if d.Shared() {
		return nil, nil // see AcceptShared
	}
	if lk, err := openRunLock(d, false); err == nil {
		cleanTemps(d, lk)
		lk.Close()
	}
	entries, err := d.ReadDir()
	if err != nil {
		return nil, fmt.Errorf("rundir %s: %w", rundir, err)
	}
	var out []Node
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), RecordExt)
		if !ok || !e.Type().IsRegular() || CheckName(name) != nil {
			continue
		}
		n, _, err := readRecord(d, rundir, name)
		if err != nil {
			// Gone since the folder was read: not there, as a
			// reader a moment later would see.
			if !errors.Is(err, fs.ErrNotExist) {
				skipped(err)
			}
			continue
		}
		out = append(out, n)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Index != out[j].Index {
			return out[i].Index < out[j].Index
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// Resolve expands the spec like [Spec.Nodes] and fills in, from the records
// in the rundir, whatever the spec leaves out: a node's pidfile and logfile
// when no template was given for it, its command and working directory
// when the spec has no command. Options given without a command replace
// the recorded options of the recorded command. With no names it returns
// every recorded node, and [ErrNoNodes] when there are none.
func (s Spec) Resolve() ([]Node, error) {
	rundir := s.RunDir
	if rundir == "" {
		rundir = DefaultRunDir()
	}
	if s.AllowSharedFolders {
		AcceptShared(rundir, nil)
	}
	// The records read already (all of them, with no names), else read
	// here, each through one opening of the rundir.
	skipped := s.Skipped
	if skipped == nil {
		skipped = func(error) {}
	}
	var recorded map[string]Node
	if len(s.Names) == 0 {
		recs, err := readRecords(rundir, skipped)
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 && s.AllowSharedFolders && safefs.SharedFolder(rundir) {
			return nil, fmt.Errorf("%w, and records in %s are %w", ErrNoNodes, rundir, errShared)
		}
		if len(recs) == 0 {
			return nil, fmt.Errorf("%w, and none recorded in %s", ErrNoNodes, rundir)
		}
		names := make([]string, len(recs))
		recorded = make(map[string]Node, len(recs))
		for i, r := range recs {
			names[i] = r.Name + "@" + r.Host
			recorded[r.Name] = r
		}
		s.Names, s.Prefix = names, ""
	} else {
		cleanRunDir(rundir) // ReadRecords did it in the branch above
	}
	ns, explicit, err := s.nodes()
	if err != nil {
		return nil, err
	}
	if s.AllowSharedFolders {
		AcceptShared("", ns)
	}
	var d *safefs.Folder
	if recorded == nil {
		if d, err = safefs.OpenFolder(rundir, false); err == nil {
			defer d.Close()
		} else {
			d = nil // ReadRecord says why, node by node, as before
		}
	}
	read := func(name string) (Node, error) {
		if rec, ok := recorded[name]; ok {
			return rec, nil
		}
		rec, _, err := readRecord(d, rundir, name)
		return rec, err
	}
	for i := range ns {
		rec, err := read(ns[i].Name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil && (d == nil && recorded == nil) {
			return nil, err // the rundir's, not the record's
		}
		if err != nil {
			// As if absent: forget can remove it, start can replace it.
			skipped(err)
			continue
		}
		if !explicit[i].pidfile {
			ns[i].PidFile = rec.PidFile
		}
		if !explicit[i].logfile {
			ns[i].LogFile = rec.LogFile
		}
		ns[i].takeRecorded(rec)
		if len(s.Command) > 0 {
			continue
		}
		ns[i].Dir, ns[i].SelfLock, ns[i].Ready = rec.Dir, rec.SelfLock || s.SelfLock, orCheck(ns[i].Ready, rec.Ready)
		if len(s.Env) == 0 {
			ns[i].Env = rec.Env
		}
		if len(s.Options) == 0 {
			ns[i].Command, ns[i].Options = rec.Command, rec.Options
			continue
		}
		base := rec.Command[:len(rec.Command)-len(rec.Options)]
		ns[i].Command = append(append([]string{}, base...), ns[i].Options...)
	}
	return ns, nil
}
