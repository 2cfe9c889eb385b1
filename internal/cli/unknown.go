package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/multi"
)

// errUnknownNode: a name status was given has neither a record nor a
// pidfile; most often a typo.
var errUnknownNode = errors.New("unknown node")

// markUnknown makes each named node that has neither a record in rundir
// nor a pidfile unknown (LSB 4), with the recorded names closest to it:
// "stopped" would tell someone who mistyped a name that it is down.
func markUnknown(sts []multi.Status, rundir string) {
	var recorded []string
	read := false
	for i := range sts {
		s := &sts[i]
		if s.State != multi.StateStopped {
			continue
		}
		if _, err := record.Read(rundir, s.Node.Name); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if !read {
			ns, _ := record.ReadAll(rundir)
			for _, n := range ns {
				recorded = append(recorded, n.Name)
			}
			read = true
		}
		err := fmt.Errorf("%w: no record %s and no pidfile %s", errUnknownNode,
			record.Path(rundir, s.Node.Name), s.Node.PidFile)
		if near := closestNames(s.Node.Name, recorded); len(near) > 0 {
			err = fmt.Errorf("%w; did you mean %s?", err, orList(near))
		}
		s.State, s.Err = multi.StateUnknown, &multi.NodeError{Node: s.Node.Name, Op: "status", Err: err}
	}
}

// closestNames are the names nearest to name by edit distance (within a
// third of its length, at least 1), the nearest first, at most three.
func closestNames(name string, names []string) []string {
	limit := max(1, len(name)/3)
	type near struct {
		name string
		d    int
	}
	var out []near
	for _, n := range names {
		if d := editDistance(name, n); d <= limit && n != name {
			out = append(out, near{n, d})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].d != out[j].d {
			return out[i].d < out[j].d
		}
		return naturalCompare(out[i].name, out[j].name) < 0
	})
	var names3 []string
	for _, n := range out[:min(3, len(out))] {
		names3 = append(names3, n.name)
	}
	return names3
}

// orList is "a", "a or b", "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
