//go:build unix && !linux

package integration

import "github.com/rogpeppe/go-internal/testscript"

// canSubreaper: only Linux has child subreapers.
func canSubreaper() bool { return false }

// The commands of the multi run scripts need Linux (pid namespaces,
// /proc): the scripts skip elsewhere.
func cmdNsRun(ts *testscript.TestScript, neg bool, args []string)  { ts.Fatalf("nsrun: needs Linux") }
func cmdNsWait(ts *testscript.TestScript, neg bool, args []string) { ts.Fatalf("nswait: needs Linux") }
func cmdHeld(ts *testscript.TestScript, neg bool, args []string)   { ts.Fatalf("held: needs Linux") }
func cmdOrphan(ts *testscript.TestScript, neg bool, args []string) { ts.Fatalf("orphan: needs Linux") }
func cmdReaped(ts *testscript.TestScript, neg bool, args []string) { ts.Fatalf("reaped: needs Linux") }
func cmdNotifySock(ts *testscript.TestScript, neg bool, args []string) {
	ts.Fatalf("notifysock: needs Linux")
}
func cmdLockWaiter(ts *testscript.TestScript, neg bool, args []string) {
	ts.Fatalf("lockwaiter: needs Linux")
}
