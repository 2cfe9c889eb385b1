// Package record keeps node records: one JSON file per node in the
// rundir, NAME.node, which lets later commands find a node again without
// its names, files or command (status, stop, restart from another shell),
// and names the process its last start started ([nodes.Started]) and what
// that start saw of its readiness check ([Readiness]).
//
// A record is written whole and swapped into place ([Write]: the node's
// spare file, or a temp file, exchanged with the record), so that a
// reader sees the old record or the new one; it is read without
// following a link, never from a FIFO, never over 1 MiB, and only as a
// file nobody else planted ([Read], [ReadAll]). One start of a node at a
// time decides, spawns and records it ([Lock]). [Resolve] expands a
// [nodes.Spec] and fills in what it leaves out from the records, as the
// command line does for every verb; [ResolveNode] does it for a node
// built without its record, as a library builds it.
//
// The rundir is reached by package internal/safefs's walk. Its lock file
// (.records.lock) lets a command remove the temp files of writers that
// died (rundir.go); a rundir that others than root and this user can
// write to, accepted ([AcceptShared]), holds no records: they are
// neither written nor read there.
package record

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
	"github.com/multi-launcher/multi/nodes"
)

// Ext ends the name of every node record in a rundir.
const Ext = ".node"

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
	SelfLock bool             `json:"self_lock,omitempty"`
	Ready    nodes.ReadyCheck `json:"ready,omitzero"`
	// PID and StartTicks: the process that runs the node (see [nodes.Started]).
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
	// Group, After and EnvFiles: the project's group, the nodes it
	// needs, and the env files read at every start (paths only).
	Group       string       `json:"group,omitempty"`
	After       []nodes.Need `json:"after,omitempty"`
	EnvFiles    []string     `json:"env_files,omitempty"`
	ReadyAt     int64        `json:"ready_at,omitempty"`
	ReadyStatus string       `json:"ready_status,omitempty"`
	LogOffset   *int64       `json:"log_offset,omitempty"`

	// Limits: what the node's process may not pass, set at every start.
	Limits nodes.Limits `json:"limits,omitzero"`
}

// Path returns where the record of the node named name lives.
func Path(rundir, name string) string {
	return filepath.Join(rundir, name+Ext)
}

// Write records n in rundir, creating the folder if needed, so that
// later commands can find its files and restart it without repeating its
// command. The write is atomic: a reader sees the old record or the new one,
// never a mix, even if the writer dies half way.
func Write(rundir string, n nodes.Node) error {
	return WriteStarted(rundir, n, nodes.Started{})
}

// WriteStarted records n like [Write], with the process that
// runs it, so that a node which lets go of its lock can still be found.
func WriteStarted(rundir string, n nodes.Node, s nodes.Started) error {
	return WriteReady(rundir, n, s, Readiness{LogOffset: -1})
}

// WriteReady records n like [WriteStarted], with what the
// start of its process s saw of its readiness check.
func WriteReady(rundir string, n nodes.Node, s nodes.Started, rd Readiness) error {
	if err := nodes.CheckName(n.Name); err != nil {
		return err
	}
	rb, err := encodeRecord(n, s, rd)
	if err != nil {
		return err
	}
	defer recordBufs.Put(rb)
	data := rb.buf.Bytes() // the record and its newline
	path := Path(rundir, n.Name)
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
func encodeRecord(n nodes.Node, s nodes.Started, rd Readiness) (*recordBuf, error) {
	r := record{Name: n.Name, Host: n.Host, Index: n.Index, Command: n.Command, Options: n.Options, Dir: n.Dir,
		Env: n.Env, PidFile: n.PidFile, LogFile: n.LogFile, SelfLock: n.SelfLock, Ready: n.Ready,
		PID: s.PID, StartTicks: s.StartTicks, PidfdIno: s.PidfdIno, Cgroup: n.Cgroup, KillMode: n.KillMode,
		Group: n.Group, After: n.After, EnvFiles: n.EnvFiles, Limits: n.Limits}
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

// Read reads the record of the node named name from rundir. The
// error wraps [fs.ErrNotExist] when there is none.
func Read(rundir, name string) (nodes.Node, error) {
	n, _, err := ReadStarted(rundir, name)
	return n, err
}

// ReadStarted reads a record like [Read], with the process it
// names (zero if none).
func ReadStarted(rundir, name string) (nodes.Node, nodes.Started, error) {
	n, r, err := readRecord(nil, rundir, name)
	n.Recorded = nodes.Started{}
	return n, r.started(), err
}

// readRecord reads a record in the folder d already open, or with d nil in
// rundir, and returns it also as it is on disk.
func readRecord(d *safefs.Folder, rundir, name string) (nodes.Node, record, error) {
	if err := nodes.CheckName(name); err != nil {
		return nodes.Node{}, record{}, err
	}
	path := Path(rundir, name)
	b, err := readRecordFile(d, path)
	if err != nil {
		return nodes.Node{}, record{}, fmt.Errorf("record %s: %w", path, err)
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nodes.Node{}, record{}, fmt.Errorf("record %s: %w", path, err)
	}
	if r.Name != name || !filepath.IsAbs(r.PidFile) || !filepath.IsAbs(r.LogFile) || len(r.Options) > len(r.Command) {
		return nodes.Node{}, record{}, fmt.Errorf("record %s: name, pidfile, logfile or command missing or not valid", path)
	}
	return nodes.Node{Name: r.Name, Host: r.Host, Index: r.Index, Command: r.Command, Options: r.Options,
		Dir: r.Dir, Env: r.Env, PidFile: r.PidFile, LogFile: r.LogFile, SelfLock: r.SelfLock, Ready: r.Ready,
		Cgroup: r.Cgroup, KillMode: r.KillMode, Group: r.Group, After: r.After, EnvFiles: r.EnvFiles, Limits: r.Limits, Recorded: r.started()}, r, nil
}

// ReadAll reads every node record in rundir, ordered by index and then
// by name. A missing rundir holds no records. A record that cannot be read
// (not valid, too large, planted) is skipped: it returns the others, and
// an error naming each one skipped.
func ReadAll(rundir string) ([]nodes.Node, error) {
	var bad []error
	ns, err := readRecords(rundir, func(err error) { bad = append(bad, err) })
	if err != nil {
		return nil, err
	}
	for i := range ns {
		ns[i].Recorded = nodes.Started{}
	}
	return ns, errors.Join(bad...)
}

// readRecords is ReadAll, calling skipped with the error of each
// record it skips; the error is the rundir's.
func readRecords(rundir string, skipped func(error)) ([]nodes.Node, error) {
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
	var out []nodes.Node
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), Ext)
		if !ok || !e.Type().IsRegular() || nodes.CheckName(name) != nil {
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

// Remove removes the record of the node named name from rundir,
// reaching the rundir without following an untrusted link (see
// [safefs.OpenFolder]), so that a rundir swapped for a link cannot make
// root remove a file elsewhere. The error wraps [fs.ErrNotExist] when
// there is no record.
func Remove(rundir, name string) error { return removeRecord(rundir, name, nil) }

// removeRecord is [Remove]; held, when not nil, is the node's
// record lock file as the caller holds it.
func removeRecord(rundir, name string, held *os.File) error {
	if err := nodes.CheckName(name); err != nil {
		return err
	}
	path := Path(rundir, name)
	d, err := safefs.OpenFolder(rundir, false)
	if err != nil {
		return fmt.Errorf("record %s: %w", path, err)
	}
	defer d.Close()
	if d.Shared() {
		return fmt.Errorf("record %s: %w", path, errShared)
	}
	if err := d.Remove(filepath.Base(path)); err != nil {
		if held != nil {
			removeRecordLock(d, name, held) // made by the caller's lock
		}
		return fmt.Errorf("record %s: %w", path, safefs.BareErr(err))
	}
	d.Remove(spareName(name)) // the previous record's file, if any
	removeRecordLock(d, name, held)
	return nil
}

// started is the process r names, zero if none. A pid written in another
// pid namespace (a rundir shared with a container) names no process here.
func (r record) started() nodes.Started {
	if r.PID <= 0 || r.StartTicks == 0 {
		return nodes.Started{}
	}
	if r.PidNS != 0 && r.PidNS != proc.PidNamespace() {
		return nodes.Started{}
	}
	return nodes.Started{PID: r.PID, StartTicks: r.StartTicks, PidfdIno: r.PidfdIno}
}
