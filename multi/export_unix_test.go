//go:build unix

package multi

// Internals the tests in package multi_test drive directly.
var (
	SignalNode = signalNode
	Confirm    = confirm
)
