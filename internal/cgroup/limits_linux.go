package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/multi-launcher/multi/internal/safefs"
)

// available says why controller cannot limit the nodes under the
// rundir's folder parent: it is not in its cgroup.controllers. What the
// folder above it (this process's cgroup, not multi's) lists says where
// it would have to be enabled.
func available(parent, controller string) error {
	have, err := Controllers(parent)
	if err != nil {
		return fmt.Errorf("controller %s: %w", controller, err)
	}
	if slices.Contains(have, controller) {
		return nil
	}
	msg := fmt.Sprintf("controller %s not available in the cgroup v2 subtree multi owns: %s; its cgroup.controllers lists %s", controller, parent, listOrNone(have))
	above := filepath.Dir(parent)
	if up, err := Controllers(above); err == nil && slices.Contains(up, controller) {
		msg += fmt.Sprintf(" (enable it in %s for multi: echo +%s > %s)", filepath.Join(above, "cgroup.subtree_control"), controller, filepath.Join(above, "cgroup.subtree_control"))
	} else if err == nil {
		msg += fmt.Sprintf("; nor does %s's (it lists %s): %s is bound to a cgroup v1 hierarchy here, or not delegated", above, listOrNone(up), controller)
	}
	return errors.New(msg)
}

// listOrNone is a list of controllers as cgroup.controllers gives it, or
// "none".
func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, " ")
}

// Controllers lists the controllers in the cgroup.controllers of the
// cgroup folder dir, reached by the no-link walk.
func Controllers(dir string) ([]string, error) {
	d, err := safefs.OpenFolder(dir, false)
	if err != nil {
		return nil, fmt.Errorf("cgroup %s: %w", dir, err)
	}
	defer d.Close()
	b, err := readAt(int(d.File().Fd()), "cgroup.controllers")
	if err != nil {
		return nil, fmt.Errorf("cgroup %s: %w", dir, err)
	}
	return strings.Fields(string(b)), nil
}

// SetLimits readies the node's folder, held as [Make] returned it, for
// its node: each setting's controller enabled in the folder above it
// (the rundir's, whose cgroup.subtree_control says which controllers its
// folders have; left as it is when it has it already), then each value
// written into its file in the node's folder. The error names the file,
// the value and the setting's flag.
func SetLimits(node *os.File, settings []Setting) error {
	return setLimits(int(node.Fd()), settings)
}

// setLimits is SetLimits on the node's folder fd: the folder above
// reached as "..", every file opened without following a link and
// without creating it (a cgroup folder has them all). It touches only
// files, so that a plain folder made to look like a cgroup's can stand
// in for one.
func setLimits(fd int, settings []Setting) error {
	pfd, err := unix.Openat(fd, "..", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("cgroup: the folder above the node's: %w", err)
	}
	defer unix.Close(pfd)
	b, err := readAt(pfd, "cgroup.subtree_control")
	if err != nil {
		return fmt.Errorf("cgroup: the rundir's cgroup.subtree_control: %w", err)
	}
	on := strings.Fields(string(b))
	for _, s := range settings {
		if slices.Contains(on, s.Controller) {
			continue
		}
		if err := writeAt(pfd, "cgroup.subtree_control", "+"+s.Controller); err != nil {
			return fmt.Errorf("%s: cannot enable the %s controller for the node's cgroup (the rundir's cgroup.subtree_control): %w", s.Flag, s.Controller, err)
		}
		on = append(on, s.Controller)
	}
	for _, s := range settings {
		if err := writeAt(fd, s.File, s.Value); err != nil {
			return fmt.Errorf("%s: cannot write %q to the node's %s: %w", s.Flag, s.Value, s.File, err)
		}
	}
	return nil
}

// writeAt writes value, in one write, to the file name in the folder
// dirfd, which must exist, not through a link.
func writeAt(dirfd int, name, value string) error {
	fd, err := unix.Openat(dirfd, name, unix.O_WRONLY|unix.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	_, err = unix.Write(fd, []byte(value))
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	return err
}
