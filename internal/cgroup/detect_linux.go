package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/safefs"
)

// Detect returns the containment this process can give the nodes of
// rundir, making the rundir's cgroup folder when it can: Cgroup where a
// cgroup2 hierarchy is mounted, this process's own cgroup in it is
// reached without an untrusted link, multi can make a folder there that
// this user owns, and that folder has cgroup.kill (Linux 5.14); else
// Session, with the reason.
func Detect(rundir string) Containment {
	want := os.Getenv(EnvContainment)
	switch want {
	case "", "auto", Cgroup:
	case Session:
		return Containment{Mode: Session, Why: EnvContainment + "=session"}
	default:
		return Containment{Mode: Session, Why: fmt.Sprintf("%s=%q is not auto, cgroup or session", EnvContainment, want)}
	}
	c, err := detect(rundir)
	if err != nil {
		return Containment{Mode: Session, Why: err.Error()}
	}
	return c
}

func detect(rundir string) (Containment, error) {
	mount := os.Getenv(EnvRoot)
	if mount == "" {
		var err error
		if mount, err = findMount(); err != nil {
			return Containment{}, err
		}
	} else if err := isCgroup2(mount); err != nil {
		return Containment{}, fmt.Errorf("%s=%s: %w", EnvRoot, mount, err)
	}
	own, err := ownCgroup()
	if err != nil {
		return Containment{}, err
	}
	dir := filepath.Join(mount, own)
	d, err := safefs.OpenFolder(dir, false)
	if err != nil {
		return Containment{}, fmt.Errorf("this process's cgroup %s: %w", dir, err)
	}
	defer d.Close()
	name := ParentName(rundir)
	parent := filepath.Join(dir, name)
	made := false
	if err := unix.Mkdirat(int(d.File().Fd()), name, 0o755); err == nil {
		made = true
	} else if err != unix.EEXIST {
		return Containment{}, fmt.Errorf("cannot make a cgroup in %s (not delegated to this user, or read-only): %w", dir, err)
	}
	undo := func() {
		if made {
			removeIdle(int(d.File().Fd()), name) // not if a start holds it
		}
	}
	var st unix.Stat_t
	if err := unix.Fstatat(int(d.File().Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		undo()
		return Containment{}, fmt.Errorf("cgroup %s: %w", parent, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Geteuid() {
		undo()
		return Containment{}, fmt.Errorf("cgroup %s: not a folder of this user's", parent)
	}
	if err := unix.Faccessat(int(d.File().Fd()), name+"/cgroup.kill", unix.F_OK, 0); err != nil {
		undo()
		return Containment{}, fmt.Errorf("cgroup %s has no cgroup.kill (Linux 5.14 or later has it)", parent)
	}
	return Containment{Mode: Cgroup, Parent: parent, Why: fmt.Sprintf("cgroup v2 at %s; this process's cgroup %s is writable by this user", mount, dir)}, nil
}

// findMount returns the mount point of the cgroup2 hierarchy that
// /proc/self/mountinfo lists.
func findMount() (string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("no /proc/self/mountinfo: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) >= 5 && len(g) >= 1 && g[0] == "cgroup2" {
			return unescape(f[4]), nil
		}
	}
	return "", errors.New("no cgroup2 hierarchy mounted")
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// isCgroup2 says why the folder at path is no cgroup2 hierarchy.
func isCgroup2(path string) error {
	var fs unix.Statfs_t
	if err := unix.Statfs(path, &fs); err != nil {
		return err
	}
	if fs.Type != unix.CGROUP2_SUPER_MAGIC {
		return errors.New("not a cgroup2 mount")
	}
	return nil
}

// ownCgroup is the cgroup v2 path of this process's nodes: its own, or
// for a run in its leaf (see [PlaceRun]), the one beside it. A process in
// a node's folder (a verb run from inside a node, a node that starts
// nodes, an exec check's folder) has them beside that node's rundir
// folder, never in it: no node's tree holds another's.
func ownCgroup() (string, error) {
	p, err := selfCgroup()
	if err == nil && filepath.Base(p) == RunLeaf {
		p = filepath.Dir(p)
	}
	for err == nil && p != "/" && strings.HasPrefix(filepath.Base(filepath.Dir(p)), "multi.") {
		p = filepath.Dir(filepath.Dir(p))
	}
	return p, err
}

// selfCgroup is this process's cgroup v2 path, from /proc/self/cgroup.
func selfCgroup() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("no /proc/self/cgroup: %w", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			if !strings.HasPrefix(p, "/") || strings.Contains(p, "/..") || filepath.Clean(p) != p {
				return "", fmt.Errorf("this process's cgroup %q is outside this cgroup namespace", p)
			}
			return p, nil
		}
	}
	return "", errors.New("this process is in no cgroup v2 (no 0:: line in /proc/self/cgroup)")
}
