package nodes

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// RecordExt ends the name of every node record in a rundir.
const RecordExt = ".node"

// record is the JSON form of a node record.
type record struct {
	Name    string   `json:"name"`
	Host    string   `json:"host"`
	Index   int      `json:"index"`
	Command []string `json:"command"`
	Dir     string   `json:"dir,omitempty"`
	PidFile string   `json:"pidfile"`
	LogFile string   `json:"logfile"`
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
	if err := CheckName(n.Name); err != nil {
		return err
	}
	b, err := json.MarshalIndent(record{n.Name, n.Host, n.Index, n.Command, n.Dir, n.PidFile, n.LogFile}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(rundir, 0o755); err != nil {
		return fmt.Errorf("record %s: %w", n.Name, err)
	}
	f, err := os.CreateTemp(rundir, "."+n.Name+".tmp*")
	if err != nil {
		return fmt.Errorf("record %s: %w", n.Name, err)
	}
	tmp := f.Name()
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, RecordPath(rundir, n.Name))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("record %s: %w", n.Name, err)
	}
	return nil
}

// ReadRecord reads the record of the node named name from rundir. The
// error wraps [fs.ErrNotExist] when there is none.
func ReadRecord(rundir, name string) (Node, error) {
	if err := CheckName(name); err != nil {
		return Node{}, err
	}
	path := RecordPath(rundir, name)
	b, err := os.ReadFile(path)
	if err != nil {
		return Node{}, fmt.Errorf("record %s: %w", path, err)
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return Node{}, fmt.Errorf("record %s: %w", path, err)
	}
	if r.Name != name || !filepath.IsAbs(r.PidFile) || !filepath.IsAbs(r.LogFile) {
		return Node{}, fmt.Errorf("record %s: name, pidfile or logfile missing or not absolute", path)
	}
	return Node{Name: r.Name, Host: r.Host, Index: r.Index, Command: r.Command, Dir: r.Dir, PidFile: r.PidFile, LogFile: r.LogFile}, nil
}

// ReadRecords reads every node record in rundir, ordered by index and then
// by name. A missing rundir holds no records.
func ReadRecords(rundir string) ([]Node, error) {
	entries, err := os.ReadDir(rundir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Node
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), RecordExt)
		if !ok || !e.Type().IsRegular() || CheckName(name) != nil {
			continue
		}
		n, err := ReadRecord(rundir, name)
		if err != nil {
			return nil, err
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
// when the spec has no template for them, its command and working directory
// when the spec has no command. With no names it returns every recorded
// node, and [ErrNoNodes] when there are none.
func (s Spec) Resolve() ([]Node, error) {
	rundir := s.RunDir
	if rundir == "" {
		rundir = DefaultRunDir()
	}
	if len(s.Names) == 0 {
		recs, err := ReadRecords(rundir)
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			return nil, fmt.Errorf("%w, and none recorded in %s", ErrNoNodes, rundir)
		}
		for i := range recs {
			if s.PidFile != "" || s.LogFile != "" || len(s.Command) > 0 {
				// Templates given on the command line win over records.
				spec := s
				spec.Names = []string{recs[i].Name}
				ns, err := spec.Resolve()
				if err != nil {
					return nil, err
				}
				ns[0].Index = recs[i].Index
				recs[i] = ns[0]
			}
		}
		return recs, nil
	}
	ns, err := s.Nodes()
	if err != nil {
		return nil, err
	}
	for i := range ns {
		rec, err := ReadRecord(rundir, ns[i].Name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if s.PidFile == "" {
			ns[i].PidFile = rec.PidFile
		}
		if s.LogFile == "" {
			ns[i].LogFile = rec.LogFile
		}
		if len(s.Command) == 0 {
			ns[i].Command, ns[i].Dir = rec.Command, rec.Dir
		}
	}
	return ns, nil
}
