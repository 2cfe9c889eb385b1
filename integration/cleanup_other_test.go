//go:build !linux

package integration

import "github.com/rogpeppe/go-internal/testscript"

// cleanup needs pidfds, which only Linux has.
func cmdCleanup(ts *testscript.TestScript, neg bool, args []string) {
	ts.Fatalf("cleanup: needs pidfds (Linux)")
}
