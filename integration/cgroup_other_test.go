//go:build !linux

package integration

import "github.com/rogpeppe/go-internal/testscript"

// marked reads /proc, which only Linux has here.
func cmdMarked(ts *testscript.TestScript, neg bool, args []string) {
	ts.Fatalf("marked: needs /proc (Linux)")
}

// canCgroup: cgroups are Linux's.
func canCgroup() bool { return false }

// canLimit is false: there are no cgroups off Linux.
func canLimit(controller string) bool { return false }

// killCgroups: there are none off Linux.
func killCgroups(rundir string) {}
