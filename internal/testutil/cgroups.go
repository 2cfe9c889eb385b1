package testutil

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/multi-launcher/multi/internal/cgroup"
)

// MainSweepingCgroups is a package's TestMain that runs its tests and
// then removes the cgroup folders they left (see [SweepCgroups]); it
// exits with the tests' code.
func MainSweepingCgroups(m *testing.M) {
	sweep := SweepCgroups()
	code := m.Run()
	sweep()
	os.Exit(code)
}

// SweepCgroups notes the multi.* cgroup v2 folders there are now (the
// parents multi makes for a rundir's nodes) and returns a function that
// removes those made since, once empty and not in use: a test's rundir
// goes with its TempDir, and with it the next command of that rundir that
// would have removed them. Only empty folders go (rmdir of a populated cgroup
// fails); for a package's TestMain, around m.Run.
func SweepCgroups() (done func()) {
	before := map[string]bool{}
	for _, d := range multiCgroups() {
		before[d] = true
	}
	return func() {
		for _, d := range multiCgroups() {
			if before[d] {
				continue
			}
			// Only what no multi command holds: another package's or
			// test process's start may be making its node's folder now.
			ents, _ := os.ReadDir(d)
			for _, e := range ents {
				if e.IsDir() {
					cgroup.RemoveIdle(filepath.Join(d, e.Name()))
				}
			}
			cgroup.RemoveIdle(d)
		}
	}
}

// multiCgroups lists the multi.* folders at the top of every cgroup2
// mount and of this process's own cgroup there.
func multiCgroups() []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	own := "/"
	if b, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if p, ok := strings.CutPrefix(l, "0::"); ok {
				own = p
			}
		}
	}
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		i := 0
		for i < len(fields) && fields[i] != "-" {
			i++
		}
		if i+1 >= len(fields) || fields[i+1] != "cgroup2" || len(fields) < 5 {
			continue
		}
		for _, root := range []string{fields[4], filepath.Join(fields[4], own)} {
			m, _ := filepath.Glob(filepath.Join(root, "multi.*"))
			out = append(out, m...)
		}
	}
	return out
}
