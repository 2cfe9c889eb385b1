// Package testhooks gates the hooks that tests use to hold open the
// windows of a start, a record write or a lock (the _MULTI_TEST_*
// environment variables). They act only in a binary built with
// -tags multitest (the integration tests build multi so) or in a test
// binary that calls [Enable]; in any other build the variables are
// ignored, whoever sets them (the environment, a node's --env).
package testhooks

import "os"

// enabled is whether the hooks act in this process.
var enabled = tagged

// Enable turns the hooks on in this process. Only test code calls it,
// from a package-level variable's initializer of a _test.go file, so
// that they are on before any init function runs (the exec step runs
// from one).
func Enable() { enabled = true }

// On reports whether the hooks act in this process.
func On() bool { return enabled }

// Getenv is os.Getenv(key) when the hooks act, and "" otherwise.
func Getenv(key string) string {
	if !enabled {
		return ""
	}
	return os.Getenv(key)
}
