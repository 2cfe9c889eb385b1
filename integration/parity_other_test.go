//go:build !linux

package integration

import "github.com/rogpeppe/go-internal/testscript"

// parity reads what a process sees of its surroundings in /proc: Linux.
func cmdParity(ts *testscript.TestScript, neg bool, args []string) {
	ts.Fatalf("parity: needs /proc (Linux)")
}
