package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/multi-launcher/multi/internal/record"
	"github.com/multi-launcher/multi/multi"
	"github.com/multi-launcher/multi/nodes"
)

// errUnknownNode: a name status was given has neither a record nor a
// pidfile; most often a typo.
var errUnknownNode = errors.New("unknown node")

// markUnknown makes each named node that has neither a record in rundir
// nor a pidfile unknown (LSB 4), with the recorded names closest to it:
// "stopped" would tell someone who mistyped a name that it is down.
func markUnknown(sts []multi.Status, rundir string) {
	var ns []nodes.Node
	for _, s := range sts {
		if s.State == multi.StateStopped {
			ns = append(ns, s.Node)
		}
	}
	unknown := unknownNodes(ns, rundir, "status")
	for i := range sts {
		if err := unknown[sts[i].Node.Name]; err != nil {
			sts[i].State, sts[i].Err = multi.StateUnknown, err
		}
	}
}

// unknownNodes returns, by name, the error of each of ns that has neither
// a record in rundir nor a pidfile, naming the recorded names closest to
// it, for op: most often a typo, or another --rundir.
func unknownNodes(ns []nodes.Node, rundir, op string) map[string]error {
	out := map[string]error{}
	var recorded []string
	read := false
	for _, n := range ns {
		if _, err := record.Read(rundir, n.Name); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if _, err := os.Lstat(n.PidFile); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if !read {
			rs, _ := record.ReadAll(rundir)
			for _, r := range rs {
				recorded = append(recorded, r.Name)
			}
			read = true
		}
		err := fmt.Errorf("%w: no record %s and no pidfile %s", errUnknownNode, record.Path(rundir, n.Name), n.PidFile)
		if near := closestNames(n.Name, recorded); len(near) > 0 {
			err = fmt.Errorf("%w; did you mean %s?", err, orList(near))
		}
		out[n.Name] = &multi.NodeError{Node: n.Name, Op: op, Err: err}
	}
	return out
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
