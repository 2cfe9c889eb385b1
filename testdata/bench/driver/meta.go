//go:build linux

package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

// meta is what every results file records, so that each number can be
// traced to the tree and the machine that produced it.
type meta struct {
	commit   string // git rev-parse HEAD of the working directory
	dirty    string // "clean", "dirty" or "?"
	multiVer string // multi --version: the commit the binary was built from
	date     time.Time
	host     string
	cpus     int
	kernel   string
	folders  []string // "path (fstype)" of the tmpfs pass, the disk pass, s6's scan dirs
	knobs    string   // every flag of the driver, as given or defaulted
	limits   string
	took     time.Duration
}

func collectMeta(multiBin, base, diskDir, s6Base, limits, resolved string, took time.Duration) meta {
	m := meta{date: time.Now().UTC(), cpus: numCPU(), kernel: kernel(), limits: limits, took: took,
		commit: "?", dirty: "?", multiVer: "?"}
	m.host, _ = os.Hostname()
	if _, _, out, err := run([]string{"git", "rev-parse", "HEAD"}, spawnOpts{capture: true}); err == nil {
		m.commit = strings.TrimSpace(out)
	}
	if _, _, out, err := run([]string{"git", "status", "--porcelain"}, spawnOpts{capture: true}); err == nil {
		m.dirty = "clean"
		if strings.TrimSpace(out) != "" {
			m.dirty = "dirty"
		}
	}
	if _, _, out, err := run([]string{multiBin, "--version"}, spawnOpts{capture: true}); err == nil {
		m.multiVer = strings.TrimSpace(strings.ReplaceAll(out, "\n", " "))
	}
	m.folders = append(m.folders, fmt.Sprintf("tmpfs pass %s (%s)", base, fsType(base)))
	if diskDir != "" {
		m.folders = append(m.folders, fmt.Sprintf("disk pass %s (%s)", diskDir, fsType(diskDir)))
	}
	m.folders = append(m.folders, fmt.Sprintf("s6 scan dirs %s (%s)", s6Base, fsType(s6Base)))
	var knobs []string
	flag.VisitAll(func(f *flag.Flag) { knobs = append(knobs, fmt.Sprintf("-%s=%q", f.Name, f.Value.String())) })
	m.knobs = strings.Join(knobs, " ") + "; resolved: " + resolved
	return m
}

// lines returns the record as "key: value" lines.
func (m meta) lines() []string {
	return []string{
		"commit: " + m.commit + " (" + m.dirty + " tree)",
		"multi --version: " + m.multiVer,
		"date: " + m.date.Format(time.RFC3339),
		fmt.Sprintf("machine: %s, %d CPUs, %s", m.host, m.cpus, m.kernel),
		"folders: " + strings.Join(m.folders, "; "),
		"limits: " + m.limits,
		"driver knobs: " + m.knobs,
		"driver run time: " + m.took.Round(time.Second).String(),
	}
}
