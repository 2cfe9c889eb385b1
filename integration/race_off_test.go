//go:build !race

package integration

// raceBuild: the tests run without the race detector, so the programs
// are built without it too (no C compiler needed).
var raceBuild []string
